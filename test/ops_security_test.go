package test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/test/harness"
)

// TestMySQLTLSVerifyIdentity: against a MariaDB that refuses plain TCP
// (require_secure_transport=ON) and a user that must present a client
// certificate (REQUIRE X509), the router routes rows with --mysql-tls
// verify-identity, the test CA, the client certificate and a password
// file; without TLS, with a CA that did not sign the server certificate,
// or expecting another server name, it exits 1 at once with an error
// saying why.
func TestMySQLTLSVerifyIdentity(t *testing.T) {
	dir := t.TempDir()
	pki := newTestPKI(t, dir, "ca")
	other := newTestPKI(t, dir, "other-ca") // a CA that signed nothing of this server
	e := harness.NewEnv(t, harness.EnvOpts{Maria: devenv.MariaDBConfig{ExtraArgs: []string{
		"--ssl-ca=" + pki.caFile, "--ssl-cert=" + pki.serverCert, "--ssl-key=" + pki.serverKey,
	}}})
	e.Exec("CREATE USER router@'%' IDENTIFIED BY 'tls-s3cret' REQUIRE X509")
	e.Exec("GRANT ALL PRIVILEGES ON *.* TO router@'%'")
	// devenv waits for the server over plain TCP, so --require-secure-
	// transport=ON cannot be on the command line; switch it on now and
	// move the test's own connection to TLS.
	e.DB = pki.tlsDB(t, e.Maria)
	e.Exec("SET GLOBAL require_secure_transport = ON")
	var secure int
	require.NoError(t, e.DB.QueryRow("SELECT @@require_secure_transport").Scan(&secure))
	require.Equal(t, 1, secure)
	// MariaDB answers plain TCP with "Access denied" (MySQL 8 has its own
	// error).
	require.ErrorContains(t, sqlPing(e.Maria.DSN("")), "Access denied", "the server refuses plain TCP")

	pwFile := writeSecret(t, dir, "mysql-password", "tls-s3cret\n")
	base := func(name string, tlsArgs ...string) []string {
		args := e.Args(name, append([]string{"--mysql-user", "router", "--mysql-password-file", pwFile}, tlsArgs...)...)
		return args
	}

	t.Run("verify-identity routes", func(t *testing.T) {
		evs := []harness.Event{harness.NewEvent("tls-1", "TLSRouted", `{"n":1}`), harness.NewEvent("tls-2", "TLSRouted", `{"n":2}`)}
		e.InsertTx(evs[0])
		r := harness.StartRouter(t, base("tls",
			"--mysql-tls", "verify-identity", "--mysql-tls-ca", pki.caFile,
			"--mysql-tls-cert", pki.clientCert, "--mysql-tls-key", pki.clientKey)...)
		e.InsertTx(evs[1]) // while running: the replication stream is TLS too
		recs := harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex()).Read(2, 60*time.Second)
		assert.ElementsMatch(t, []string{evs[0].ID, evs[1].ID}, harness.RecordIDs(recs))
		require.Equal(t, 0, r.Stop(20*time.Second))
	})

	fails := []struct {
		name string
		args []string
		want []string // all in the log
	}{
		{"disabled", []string{"--mysql-tls", "disabled"}, []string{"Access denied", "connected without TLS", "--mysql-tls verify-identity"}},
		{"wrong CA", []string{"--mysql-tls", "verify-identity", "--mysql-tls-ca", other.caFile,
			"--mysql-tls-cert", pki.clientCert, "--mysql-tls-key", pki.clientKey}, []string{"certificate signed by unknown authority"}},
		{"wrong CA verify-ca", []string{"--mysql-tls", "verify-ca", "--mysql-tls-ca", other.caFile,
			"--mysql-tls-cert", pki.clientCert, "--mysql-tls-key", pki.clientKey}, []string{"not signed by --mysql-tls-ca " + other.caFile, "unknown authority"}},
		{"wrong name", []string{"--mysql-tls", "verify-identity", "--mysql-tls-ca", pki.caFile, "--mysql-tls-server-name", "db.example.com",
			"--mysql-tls-cert", pki.clientCert, "--mysql-tls-key", pki.clientKey}, []string{"db.example.com"}},
		{"no client certificate", []string{"--mysql-tls", "verify-identity", "--mysql-tls-ca", pki.caFile}, []string{"Access denied", "router", "--mysql-tls-cert"}},
	}
	for _, f := range fails {
		t.Run(f.name+" fails", func(t *testing.T) {
			start := time.Now()
			r := harness.StartRouter(t, base("tlsfail", f.args...)...)
			assert.Equal(t, 1, r.Wait(30*time.Second))
			assert.Less(t, time.Since(start), 20*time.Second, "fails at once, no reconnect loop")
			log := r.Out.String()
			t.Logf("router log:\n%s", log)
			for _, w := range f.want {
				assert.Contains(t, log, w)
			}
			assert.NotContains(t, log, "tls-s3cret", "the password is never logged")
		})
	}
}

// TestMySQLTLSInvalidFlags: contradictory TLS flags are a usage error (exit
// 2) that names the flags, before any connection.
func TestMySQLTLSInvalidFlags(t *testing.T) {
	dir := t.TempDir()
	pki := newTestPKI(t, dir, "ca")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--mysql-tls-ca", pki.caFile}, "--mysql-tls-ca set but --mysql-tls is disabled"},
		{[]string{"--mysql-tls", "verify-ca"}, "--mysql-tls=verify-ca needs --mysql-tls-ca"},
		{[]string{"--mysql-tls", "preferred"}, "preferred is not supported"},
		{[]string{"--mysql-tls", "verify-identity", "--mysql-tls-cert", pki.clientCert}, "--mysql-tls-cert needs --mysql-tls-key"},
		{[]string{"--kafka-tls-ca", pki.caFile}, "--kafka-tls-ca set without --kafka-tls"},
		{[]string{"--kafka-sasl-mechanism", "SCRAM-SHA-256", "--kafka-sasl-user", "u"}, "needs a password"},
	} {
		r := harness.StartRouter(t, append([]string{"--outbox-table", "shop.outbox", "--mysql-addr", "127.0.0.1:1", "--kafka-brokers", "127.0.0.1:1"}, c.args...)...)
		assert.Equal(t, 2, r.Wait(10*time.Second), "%v", c.args)
		assert.Contains(t, r.Out.String(), c.want, "%v", c.args)
	}
}

// TestKafkaSASL: against a kfake cluster that requires SASL, the router
// routes rows with each mechanism, the password coming from a file or the
// environment; the test consumer authenticates too.
func TestKafkaSASL(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	evs := []harness.Event{harness.NewEvent("sasl-1", "SASLRouted", `{"n":1}`), harness.NewEvent("sasl-2", "SASLRouted", `{"n":2}`)}
	e.InsertTx(evs...)
	dir := t.TempDir()
	pwFile := writeSecret(t, dir, "kafka-password", "k4fka-s3cret\n")
	for _, mech := range []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"} {
		t.Run(mech, func(t *testing.T) {
			e.Kafka = startKfake(t, nil, kfake.EnableSASL(), kfake.Superuser(mech, "router", "k4fka-s3cret"))
			args := e.Args("sasl", "--kafka-sasl-mechanism", mech, "--kafka-sasl-user", "router")
			var env []string
			if mech == "SCRAM-SHA-256" {
				env = []string{"BINLOG_ROUTER_KAFKA_SASL_PASSWORD=k4fka-s3cret"}
			} else {
				args = append(args, "--kafka-sasl-password-file", pwFile)
			}
			r := harness.StartRouterEnv(t, env, args...)
			c := harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex(), saslMechanism(mech, "router", "k4fka-s3cret"))
			recs := c.Read(len(evs), 60*time.Second)
			assert.ElementsMatch(t, []string{evs[0].ID, evs[1].ID}, harness.RecordIDs(recs))
			require.Equal(t, 0, r.Stop(20*time.Second))
			assert.NotContains(t, r.Out.String(), "k4fka-s3cret", "the password is never logged")
		})
	}
}

// TestKafkaSASLWrongPassword: with a wrong password the router exits 1
// within seconds with an error saying SASL authentication failed, and
// does not hammer the broker with connections meanwhile.
func TestKafkaSASLWrongPassword(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	e.InsertTx(harness.NewEvent("x", "Never", `{}`))
	var conns atomic.Int64
	e.Kafka = startKfake(t, &conns, kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-256", "router", "right"))
	start := time.Now()
	r := harness.StartRouterEnv(t, []string{"BINLOG_ROUTER_KAFKA_SASL_PASSWORD=wrong"},
		e.Args("saslfail", "--kafka-sasl-mechanism", "SCRAM-SHA-256", "--kafka-sasl-user", "router")...)
	code := r.Wait(60 * time.Second)
	took := time.Since(start)
	log := r.Out.String()
	assert.Equal(t, 1, code)
	assert.Less(t, took, 30*time.Second, "fails fast")
	assert.Regexp(t, regexp.MustCompile(`(?i)SASL authentication failed`), log)
	assert.NotContains(t, log, `"wrong"`, "the password is never logged")
	n := conns.Load()
	t.Logf("router log:\n%s", log)
	t.Logf("exit %d after %s, %d connections, %d log lines", code, took.Round(time.Millisecond), n, strings.Count(log, "\n"))
	assert.LessOrEqual(t, n, int64(30), "bounded connection attempts")
	assert.LessOrEqual(t, strings.Count(log, "\n"), 30, "no log storm")

	// Every command that reaches Kafka says the same.
	t.Setenv("BINLOG_ROUTER_KAFKA_SASL_PASSWORD", "wrong")
	args := e.Args("saslfail", "--kafka-sasl-mechanism", "SCRAM-SHA-256", "--kafka-sasl-user", "router")
	for _, cmd := range [][]string{{"checkpoint", "show"}, {"checkpoint", "reset"}} {
		res := harness.RunCLI(t, append(cmd, args...)...)
		assert.Equal(t, 1, res.Code, "%s", cmd)
		assert.Regexp(t, regexp.MustCompile(`(?i)SASL authentication failed.*--kafka-sasl-user`), res.Stderr, "%s", cmd)
	}
}

// TestKafkaTLS: against a kfake cluster that speaks only TLS, requires a
// client certificate and SCRAM-SHA-512, the router routes rows with
// --kafka-tls, the CA and the client certificate (the consumer does the
// same); with a CA that did not sign the broker certificate, or without
// --kafka-tls, it exits 1 within seconds saying why; with
// --kafka-tls-insecure-skip-verify it routes but warns.
func TestKafkaTLS(t *testing.T) {
	dir := t.TempDir()
	pki := newTestPKI(t, dir, "ca")
	other := newTestPKI(t, dir, "other-ca")
	serverPair, err := tls.LoadX509KeyPair(pki.serverCert, pki.serverKey)
	require.NoError(t, err)
	clientCAs := x509.NewCertPool()
	clientCAs.AddCert(pki.ca)
	e := harness.NewEnv(t, harness.EnvOpts{})
	evs := []harness.Event{harness.NewEvent("ktls-1", "KafkaTLSRouted", `{"n":1}`), harness.NewEvent("ktls-2", "KafkaTLSRouted", `{"n":2}`)}
	e.InsertTx(evs...)
	var conns atomic.Int64
	e.Kafka = startKfake(t, &conns,
		kfake.TLS(&tls.Config{Certificates: []tls.Certificate{serverPair}, ClientCAs: clientCAs,
			ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}),
		kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", "router", "k4fka-s3cret"))
	sasl := []string{"--kafka-sasl-mechanism", "SCRAM-SHA-512", "--kafka-sasl-user", "router",
		"--kafka-sasl-password-file", writeSecret(t, dir, "kafka-password", "k4fka-s3cret")}
	client := []string{"--kafka-tls-cert", pki.clientCert, "--kafka-tls-key", pki.clientKey}

	t.Run("verified routes", func(t *testing.T) {
		r := harness.StartRouter(t, e.Args("ktls", append(append([]string{"--kafka-tls", "--kafka-tls-ca", pki.caFile}, client...), sasl...)...)...)
		clientPair, err := tls.LoadX509KeyPair(pki.clientCert, pki.clientKey)
		require.NoError(t, err)
		roots := x509.NewCertPool()
		roots.AddCert(pki.ca)
		c := harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex(),
			kgo.DialTLSConfig(&tls.Config{RootCAs: roots, Certificates: []tls.Certificate{clientPair}, MinVersion: tls.VersionTLS12}),
			saslMechanism("SCRAM-SHA-512", "router", "k4fka-s3cret"))
		recs := c.Read(len(evs), 60*time.Second)
		assert.ElementsMatch(t, []string{evs[0].ID, evs[1].ID}, harness.RecordIDs(recs))
		require.Equal(t, 0, r.Stop(20*time.Second))
		assert.NotContains(t, r.Out.String(), "insecure-skip-verify")
	})
	t.Run("insecure skip verify routes with a warning", func(t *testing.T) {
		r := harness.StartRouter(t, e.Args("ktls-insecure", append(append([]string{"--kafka-tls", "--kafka-tls-insecure-skip-verify"}, client...), sasl...)...)...)
		// checkpoint show over TLS and SASL too.
		cp := checkpointShow(t, e, "ktls-insecure", 60*time.Second,
			append(append([]string{"--kafka-tls", "--kafka-tls-ca", pki.caFile}, client...), sasl...)...)
		assert.Contains(t, cp, `"name": "ktls-insecure"`)
		require.Equal(t, 0, r.Stop(20*time.Second))
		assert.Contains(t, r.Out.String(), "--kafka-tls-insecure-skip-verify: the brokers' certificates are not verified")
	})
	for _, f := range []struct {
		name string
		args []string
		want string
	}{
		{"wrong CA", append([]string{"--kafka-tls", "--kafka-tls-ca", other.caFile}, client...), "certificate signed by unknown authority"},
		{"wrong name", append([]string{"--kafka-tls", "--kafka-tls-ca", pki.caFile, "--kafka-tls-server-name", "kafka.example.com"}, client...), "kafka.example.com"},
		{"no client certificate", []string{"--kafka-tls", "--kafka-tls-ca", pki.caFile}, "--kafka-tls-cert and --kafka-tls-key"},
	} {
		t.Run(f.name+" fails", func(t *testing.T) {
			before := conns.Load()
			start := time.Now()
			r := harness.StartRouter(t, e.Args("ktls-fail", append(f.args, sasl...)...)...)
			assert.Equal(t, 1, r.Wait(30*time.Second))
			assert.Less(t, time.Since(start), 20*time.Second)
			log := r.Out.String()
			t.Logf("router log:\n%s", log)
			assert.Contains(t, log, "TLS to the Kafka brokers")
			assert.Contains(t, log, f.want)
			assert.LessOrEqual(t, conns.Load()-before, int64(10), "bounded connection attempts")
		})
	}
}

// checkpointShow runs `binlog-router checkpoint show` for name until it
// prints a checkpoint (the router wrote one) or the timeout passes.
func checkpointShow(t *testing.T, e *harness.Env, name string, timeout time.Duration, extra ...string) string {
	t.Helper()
	return checkpointShowUntil(t, timeout, append([]string{"--name", name, "--kafka-brokers", strings.Join(e.Kafka.Brokers, ","),
		"--checkpoint-topic", e.CheckpointTopic()}, extra...)...)
}

// startKfake starts a kfake cluster (never KAFKA_BROKERS: the options
// matter) and counts accepted connections in conns if not nil.
func startKfake(t *testing.T, conns *atomic.Int64, opts ...kfake.Opt) *devenv.Kafka {
	t.Helper()
	if conns != nil {
		opts = append(opts, kfake.ListenFn(func(network, addr string) (net.Listener, error) {
			l, err := net.Listen(network, addr)
			if err != nil {
				return nil, err
			}
			return &countingListener{Listener: l, n: conns}, nil
		}))
	}
	k, err := devenv.StartKfake(opts...)
	require.NoError(t, err)
	t.Cleanup(k.Close)
	return k
}

type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

func saslMechanism(mech, user, pass string) kgo.Opt {
	var m sasl.Mechanism
	switch mech {
	case "PLAIN":
		m = plain.Auth{User: user, Pass: pass}.AsMechanism()
	case "SCRAM-SHA-256":
		m = scram.Auth{User: user, Pass: pass}.AsSha256Mechanism()
	default:
		m = scram.Auth{User: user, Pass: pass}.AsSha512Mechanism()
	}
	return kgo.SASL(m)
}

func writeSecret(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

// testPKI is a CA with a server certificate for 127.0.0.1/localhost and a
// client certificate, as PEM files.
type testPKI struct {
	ca                    *x509.Certificate
	caFile                string
	serverCert, serverKey string
	clientCert, clientKey string
}

func newTestPKI(t *testing.T, dir, name string) *testPKI {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "binlog-router test " + name},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(2 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)
	p := &testPKI{ca: ca, caFile: filepath.Join(dir, name+".pem")}
	writePEM(t, p.caFile, "CERTIFICATE", caDER)

	leaf := func(serial int64, cn string, usage x509.ExtKeyUsage, server bool) (certFile, keyFile string) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial),
			Subject:      pkix.Name{CommonName: cn},
			NotBefore:    now.Add(-time.Hour),
			NotAfter:     now.Add(2 * time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		}
		if server {
			tmpl.DNSNames = []string{"localhost"}
			tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		require.NoError(t, err)
		keyDER, err := x509.MarshalPKCS8PrivateKey(key)
		require.NoError(t, err)
		certFile, keyFile = filepath.Join(dir, name+"-"+cn+".pem"), filepath.Join(dir, name+"-"+cn+"-key.pem")
		writePEM(t, certFile, "CERTIFICATE", der)
		writePEM(t, keyFile, "PRIVATE KEY", keyDER)
		return certFile, keyFile
	}
	p.serverCert, p.serverKey = leaf(2, "server", x509.ExtKeyUsageServerAuth, true)
	p.clientCert, p.clientKey = leaf(3, "client", x509.ExtKeyUsageClientAuth, false)
	return p
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600))
}

// tlsDB opens root's connection to the test database over verified TLS,
// closed at cleanup.
func (p *testPKI) tlsDB(t *testing.T, m *devenv.MariaDB) *sql.DB {
	t.Helper()
	roots := x509.NewCertPool()
	roots.AddCert(p.ca)
	cfg, err := mysql.ParseDSN(m.DSN("shop"))
	require.NoError(t, err)
	cfg.TLS = &tls.Config{RootCAs: roots, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
	connector, err := mysql.NewConnector(cfg)
	require.NoError(t, err)
	db := sql.OpenDB(connector)
	t.Cleanup(func() { _ = db.Close() })
	require.NoError(t, db.Ping())
	return db
}

// sqlPing connects once with dsn.
func sqlPing(dsn string) error {
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	return db.Ping()
}
