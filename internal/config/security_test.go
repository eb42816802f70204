package config

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
)

// pki is a test CA with a server certificate and a client certificate.
type pki struct {
	ca                    *x509.Certificate
	caFile                string
	serverCert, serverKey string
	clientCert, clientKey string
}

// newPKI makes a CA and a server certificate for names (DNS names or IP
// addresses) and a client certificate, as PEM files in dir.
func newPKI(t *testing.T, dir, name string, names ...string) *pki {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)
	p := &pki{ca: ca, caFile: filepath.Join(dir, name+"-ca.pem")}
	writePEM(t, p.caFile, "CERTIFICATE", caDER)
	leaf := func(serial int64, cn string, usage x509.ExtKeyUsage, sans []string) (string, string) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		}
		for _, n := range sans {
			if ip := net.ParseIP(n); ip != nil {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			} else {
				tmpl.DNSNames = append(tmpl.DNSNames, n)
			}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		require.NoError(t, err)
		keyDER, err := x509.MarshalPKCS8PrivateKey(key)
		require.NoError(t, err)
		c, k := filepath.Join(dir, name+"-"+cn+".pem"), filepath.Join(dir, name+"-"+cn+"-key.pem")
		writePEM(t, c, "CERTIFICATE", der)
		writePEM(t, k, "PRIVATE KEY", keyDER)
		return c, k
	}
	p.serverCert, p.serverKey = leaf(2, "server", x509.ExtKeyUsageServerAuth, names)
	p.clientCert, p.clientKey = leaf(3, "client", x509.ExtKeyUsageClientAuth, nil)
	return p
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600))
}

// tlsServer accepts TLS connections with p's server certificate (and, if
// clientCA, requires a client certificate signed by p's CA) and completes
// each handshake; it returns its address.
func tlsServer(t *testing.T, p *pki, clientCA bool) string {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(p.serverCert, p.serverKey)
	require.NoError(t, err)
	cfg := &tls.Config{Certificates: []tls.Certificate{pair}}
	if clientCA {
		pool := x509.NewCertPool()
		pool.AddCert(p.ca)
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	l, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				_ = c.(*tls.Conn).Handshake()
				_, _ = c.Write([]byte("ok"))
				_ = c.Close()
			}()
		}
	}()
	return l.Addr().String()
}

// handshake dials addr with cfg and reads the server's greeting.
func handshake(addr string, cfg *tls.Config) error {
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	b := make([]byte, 2)
	_, err = c.Read(b)
	return err
}

// Each --mysql-tls mode against a real TLS server: what it accepts and
// what it refuses.
func TestMySQLTLSModes(t *testing.T) {
	dir := t.TempDir()
	good := newPKI(t, dir, "good", "127.0.0.1", "localhost")
	other := newPKI(t, dir, "other", "127.0.0.1")
	named := newPKI(t, dir, "named", "db.internal") // names a host, not the address dialed
	goodAddr, namedAddr := tlsServer(t, good, false), tlsServer(t, named, false)
	mtlsAddr := tlsServer(t, good, true)

	for _, c := range []struct {
		name    string
		cfg     Config
		addr    string
		wantErr string // "" = the handshake succeeds
	}{
		{"verify-identity", Config{MySQLTLSMode: "verify-identity", MySQLTLSCA: good.caFile}, goodAddr, ""},
		{"VERIFY_IDENTITY spelling", Config{MySQLTLSMode: "VERIFY_IDENTITY", MySQLTLSCA: good.caFile}, goodAddr, ""},
		{"verify-identity other CA", Config{MySQLTLSMode: "verify-identity", MySQLTLSCA: other.caFile}, goodAddr, "certificate signed by unknown authority"},
		{"verify-identity wrong name", Config{MySQLTLSMode: "verify-identity", MySQLTLSCA: named.caFile}, namedAddr, "cannot validate certificate for 127.0.0.1"},
		{"verify-identity server name", Config{MySQLTLSMode: "verify-identity", MySQLTLSCA: named.caFile, MySQLTLSServerName: "db.internal"}, namedAddr, ""},
		{"verify-identity system roots", Config{MySQLTLSMode: "verify-identity"}, goodAddr, "certificate signed by unknown authority"},
		{"verify-ca ignores the name", Config{MySQLTLSMode: "verify-ca", MySQLTLSCA: named.caFile}, namedAddr, ""},
		{"verify-ca other CA", Config{MySQLTLSMode: "verify-ca", MySQLTLSCA: other.caFile}, namedAddr, "not signed by --mysql-tls-ca " + other.caFile},
		{"required accepts any certificate", Config{MySQLTLSMode: "required"}, namedAddr, ""},
		{"client certificate", Config{MySQLTLSMode: "verify-identity", MySQLTLSCA: good.caFile, MySQLTLSCert: good.clientCert, MySQLTLSKey: good.clientKey}, mtlsAddr, ""},
		{"client certificate missing", Config{MySQLTLSMode: "verify-identity", MySQLTLSCA: good.caFile}, mtlsAddr, "certificate"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.MySQLAddr = c.addr
			cfg, err := c.cfg.MySQLTLS()
			require.NoError(t, err)
			require.NotNil(t, cfg)
			err = handshake(c.addr, cfg)
			if c.wantErr == "" {
				assert.NoError(t, err)
			} else {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.wantErr)
			}
		})
	}
}

func TestMySQLTLSValidation(t *testing.T) {
	dir := t.TempDir()
	p := newPKI(t, dir, "p", "127.0.0.1")
	notPEM := filepath.Join(dir, "not.pem")
	require.NoError(t, os.WriteFile(notPEM, []byte("hello"), 0o600))
	for _, c := range []struct {
		cfg  Config
		want []string
	}{
		{Config{}, nil},
		{Config{MySQLTLSMode: "disabled"}, nil},
		{Config{MySQLTLSCA: p.caFile, MySQLTLSServerName: "x"}, []string{"--mysql-tls-ca, --mysql-tls-server-name set but --mysql-tls is disabled"}},
		{Config{MySQLTLSMode: "preferred"}, []string{"--mysql-tls preferred is not supported", "falls back to plain TCP"}},
		{Config{MySQLTLSMode: "on"}, []string{`--mysql-tls "on": use disabled, required, verify-ca or verify-identity`}},
		{Config{MySQLTLSMode: "required", MySQLTLSCA: p.caFile}, []string{"--mysql-tls-ca is not used with --mysql-tls=required"}},
		{Config{MySQLTLSMode: "verify-ca"}, []string{"--mysql-tls=verify-ca needs --mysql-tls-ca"}},
		{Config{MySQLTLSMode: "verify-ca", MySQLTLSCA: p.caFile, MySQLTLSServerName: "x"}, []string{"--mysql-tls-server-name is only checked with --mysql-tls=verify-identity, not verify-ca"}},
		{Config{MySQLTLSMode: "verify-identity", MySQLTLSCert: p.clientCert}, []string{"--mysql-tls-cert needs --mysql-tls-key"}},
		{Config{MySQLTLSMode: "verify-identity", MySQLTLSKey: p.clientKey}, []string{"--mysql-tls-key needs --mysql-tls-cert"}},
		{Config{MySQLTLSMode: "verify-identity", MySQLTLSCert: p.clientCert, MySQLTLSKey: p.serverKey}, []string{"--mysql-tls-cert", "private key does not match"}},
		{Config{MySQLTLSMode: "verify-identity", MySQLTLSCA: notPEM}, []string{"--mysql-tls-ca " + notPEM + ": no PEM certificate"}},
		{Config{MySQLTLSMode: "verify-identity", MySQLTLSCA: filepath.Join(dir, "missing.pem")}, []string{"--mysql-tls-ca: open", "no such file"}},
		{Config{MySQLTLSMode: "verify-identity", MySQLAddr: "no-port"}, []string{"cannot take the server name from --mysql-addr", "set --mysql-tls-server-name"}},
	} {
		c.cfg.MySQLAddr = cmpOr(c.cfg.MySQLAddr, "127.0.0.1:3306")
		_, err := c.cfg.MySQLTLS()
		if len(c.want) == 0 {
			assert.NoError(t, err, "%+v", c.cfg)
			continue
		}
		if assert.Error(t, err, "%+v", c.cfg) {
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
		}
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func TestKafkaTLSConfig(t *testing.T) {
	dir := t.TempDir()
	good := newPKI(t, dir, "good", "127.0.0.1")
	other := newPKI(t, dir, "other", "127.0.0.1")
	addr := tlsServer(t, good, true)
	client := func(c Config) Config {
		c.KafkaTLS, c.KafkaTLSCert, c.KafkaTLSKey = true, good.clientCert, good.clientKey
		return c
	}
	for _, c := range []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"verified", client(Config{KafkaTLSCA: good.caFile}), ""},
		{"other CA", client(Config{KafkaTLSCA: other.caFile}), "certificate signed by unknown authority"},
		{"wrong server name", client(Config{KafkaTLSCA: good.caFile, KafkaTLSServerName: "kafka.example.com"}), "kafka.example.com"},
		{"insecure skip verify", client(Config{KafkaTLSInsecureSkipVerify: true}), ""},
		{"no client certificate", Config{KafkaTLS: true, KafkaTLSCA: good.caFile}, "certificate"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := c.cfg.KafkaTLSConfig()
			require.NoError(t, err)
			cfg = cfg.Clone()
			if cfg.ServerName == "" && !cfg.InsecureSkipVerify {
				cfg.ServerName = "127.0.0.1" // what franz-go does with the broker host
			}
			err = handshake(addr, cfg)
			if c.wantErr == "" {
				assert.NoError(t, err)
			} else {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.wantErr)
			}
		})
	}
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{KafkaTLSCA: good.caFile, KafkaTLSInsecureSkipVerify: true}, "--kafka-tls-ca, --kafka-tls-insecure-skip-verify set without --kafka-tls: add --kafka-tls"},
		{Config{KafkaTLS: true, KafkaTLSCA: good.caFile, KafkaTLSInsecureSkipVerify: true}, "--kafka-tls-insecure-skip-verify turns off the verification --kafka-tls-ca is for"},
		{Config{KafkaTLS: true, KafkaTLSServerName: "x", KafkaTLSInsecureSkipVerify: true}, "turns off the name check --kafka-tls-server-name is for"},
		{Config{KafkaTLS: true, KafkaTLSKey: good.clientKey}, "--kafka-tls-key needs --kafka-tls-cert"},
		{Config{KafkaTLS: true, KafkaTLSCA: filepath.Join(dir, "nope.pem")}, "--kafka-tls-ca: open"},
	} {
		_, err := c.cfg.KafkaTLSConfig()
		if assert.Error(t, err, "%+v", c.cfg) {
			assert.Contains(t, err.Error(), c.want)
		}
	}
	cfg, err := (&Config{}).KafkaTLSConfig()
	assert.NoError(t, err)
	assert.Nil(t, cfg, "no TLS by default")
}

func TestKafkaSASL(t *testing.T) {
	dir := t.TempDir()
	pwFile := filepath.Join(dir, "pw")
	require.NoError(t, os.WriteFile(pwFile, []byte("s3cret\r\n"), 0o600))
	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.WriteFile(empty, []byte("\n"), 0o600))

	m, err := (&Config{}).KafkaSASL()
	assert.NoError(t, err)
	assert.Nil(t, m, "no SASL by default")
	for mech, want := range map[string]string{"PLAIN": "PLAIN", "scram-sha-256": "SCRAM-SHA-256", "SCRAM-SHA-512": "SCRAM-SHA-512"} {
		m, err := (&Config{KafkaSASLMechanism: mech, KafkaSASLUser: "u", KafkaSASLPasswordFile: pwFile}).KafkaSASL()
		require.NoError(t, err, mech)
		assert.Equal(t, want, m.Name())
	}
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{KafkaSASLUser: "u", KafkaSASLPassword: "p"}, "--kafka-sasl-user, --kafka-sasl-password set without --kafka-sasl-mechanism"},
		{Config{KafkaSASLMechanism: "GSSAPI", KafkaSASLUser: "u", KafkaSASLPassword: "p"}, `--kafka-sasl-mechanism "GSSAPI": use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512`},
		{Config{KafkaSASLMechanism: "PLAIN", KafkaSASLPassword: "p"}, "--kafka-sasl-mechanism PLAIN needs --kafka-sasl-user"},
		{Config{KafkaSASLMechanism: "PLAIN", KafkaSASLUser: "u"}, "needs a password: set BINLOG_ROUTER_KAFKA_SASL_PASSWORD or --kafka-sasl-password-file"},
		{Config{KafkaSASLMechanism: "PLAIN", KafkaSASLUser: "u", KafkaSASLPassword: "p", KafkaSASLPasswordFile: pwFile}, "both --kafka-sasl-password (or BINLOG_ROUTER_KAFKA_SASL_PASSWORD) and --kafka-sasl-password-file are set"},
		{Config{KafkaSASLMechanism: "PLAIN", KafkaSASLUser: "u", KafkaSASLPasswordFile: empty}, "is empty"},
		{Config{KafkaSASLMechanism: "PLAIN", KafkaSASLUser: "u", KafkaSASLPasswordFile: filepath.Join(dir, "nope")}, "--kafka-sasl-password-file: open"},
	} {
		_, err := c.cfg.KafkaSASL()
		if assert.Error(t, err, "%+v", c.cfg) {
			assert.Contains(t, err.Error(), c.want)
		}
	}
}

// validRun is a config that passes Validate.
func validRun() Config {
	c := Default()
	c.OutboxTables = []string{"shop.outbox"}
	return c
}

func TestValidateSecurity(t *testing.T) {
	dir := t.TempDir()
	p := newPKI(t, dir, "p", "127.0.0.1")
	pwFile := filepath.Join(dir, "pw")
	require.NoError(t, os.WriteFile(pwFile, []byte("mysql-pw\n"), 0o600))

	c := validRun()
	c.MySQLPasswordFile = pwFile
	require.NoError(t, c.Validate())
	assert.Equal(t, "mysql-pw", c.MySQLPassword)
	require.NoError(t, c.Validate(), "Validate twice is fine")

	c = validRun()
	c.MySQLPassword, c.MySQLPasswordFile = "other", pwFile
	err := c.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "both --mysql-password (or BINLOG_ROUTER_MYSQL_PASSWORD) and --mysql-password-file are set")

	// All problems at once.
	c = validRun()
	c.MySQLTLSMode, c.KafkaTLSCA, c.KafkaSASLMechanism = "verify-ca", p.caFile, "PLAIN"
	err = c.Validate()
	require.Error(t, err)
	for _, w := range []string{"--mysql-tls=verify-ca needs --mysql-tls-ca", "--kafka-tls-ca set without --kafka-tls", "--kafka-sasl-mechanism PLAIN needs --kafka-sasl-user"} {
		assert.Contains(t, err.Error(), w)
	}
}

func TestWarnings(t *testing.T) {
	c := Default()
	assert.Empty(t, c.Warnings())
	c.MySQLTLSMode, c.KafkaTLS, c.KafkaTLSInsecureSkipVerify, c.KafkaSASLMechanism = "required", true, true, "SCRAM-SHA-512"
	w := strings.Join(c.Warnings(), "\n")
	assert.Contains(t, w, "--mysql-tls=required encrypts but does not verify")
	assert.Contains(t, w, "--kafka-tls-insecure-skip-verify: the brokers' certificates are not verified")
	c = Default()
	c.KafkaSASLMechanism = "plain"
	assert.Equal(t, []string{"--kafka-sasl-mechanism=PLAIN without --kafka-tls sends the password in clear text: add --kafka-tls or use SCRAM-SHA-512"}, c.Warnings())
}

// KafkaOpts and ReaderConfig carry what Validate built.
func TestBuildCarriesTLSAndSASL(t *testing.T) {
	dir := t.TempDir()
	p := newPKI(t, dir, "p", "127.0.0.1")
	c := validRun()
	c.MySQLTLSMode, c.MySQLTLSCA = "verify-identity", p.caFile
	c.MySQLAddr = "db.internal:3306"
	c.KafkaTLS, c.KafkaTLSCA = true, p.caFile
	c.KafkaSASLMechanism, c.KafkaSASLUser, c.KafkaSASLPassword = "SCRAM-SHA-512", "u", "p"
	require.NoError(t, c.Validate())

	rc := c.ReaderConfig(zerolog.Nop(), nil)
	require.NotNil(t, rc.TLS)
	assert.Equal(t, "db.internal", rc.TLS.ServerName)
	assert.NotNil(t, rc.TLS.RootCAs)
	assert.False(t, rc.TLS.InsecureSkipVerify)

	cl, err := kgo.NewClient(c.KafkaOpts()...)
	require.NoError(t, err)
	defer cl.Close()
	tlsCfg, _ := cl.OptValue(kgo.DialTLSConfig).(*tls.Config)
	require.NotNil(t, tlsCfg)
	assert.NotNil(t, tlsCfg.RootCAs)
	mechs, _ := cl.OptValue(kgo.SASL).([]sasl.Mechanism)
	require.Len(t, mechs, 1)
	assert.Equal(t, "SCRAM-SHA-512", mechs[0].Name())

	plainCfg := validRun()
	require.NoError(t, plainCfg.Validate())
	assert.Nil(t, plainCfg.ReaderConfig(zerolog.Nop(), nil).TLS, "disabled: plain TCP")
}

// Invalid settings used without Validate fail every connection instead of
// falling back to plain, unauthenticated TCP.
func TestBuildFailsClosed(t *testing.T) {
	dir := t.TempDir()
	good := newPKI(t, dir, "good", "127.0.0.1")
	addr := tlsServer(t, good, false)

	c := Default()
	c.MySQLTLSMode, c.MySQLTLSCA = "verify-identity", filepath.Join(dir, "missing.pem")
	rc := c.ReaderConfig(zerolog.Nop(), nil)
	require.NotNil(t, rc.TLS)
	err := handshake(addr, rc.TLS)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "invalid MySQL TLS settings")

	c = Default()
	c.KafkaSASLMechanism = "PLAIN" // no user, no password
	c.KafkaBrokers = []string{addr}
	cl, err := kgo.NewClient(c.KafkaOpts()...)
	require.NoError(t, err)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = cl.Ping(ctx)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "invalid Kafka connection settings")
}

// CheckKafkaAuth against a real (in-process) SASL broker.
func TestCheckKafkaAuth(t *testing.T) {
	k, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-256", "router", "right"))
	require.NoError(t, err)
	defer k.Close()
	ctx := context.Background()

	c := Default()
	c.KafkaBrokers = k.ListenAddrs()
	c.KafkaSASLMechanism, c.KafkaSASLUser, c.KafkaSASLPassword = "SCRAM-SHA-256", "router", "right"
	require.NoError(t, c.ValidateConnection())
	assert.NoError(t, c.CheckKafkaAuth(ctx))

	c.KafkaSASLPassword = "wrong"
	require.NoError(t, c.ValidateConnection())
	start := time.Now()
	err = c.CheckKafkaAuth(ctx)
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrKafkaAuth))
	assert.Contains(t, err.Error(), `SASL authentication failed: the Kafka brokers (`+k.ListenAddrs()[0]+`) refused user "router" with SCRAM-SHA-256`)
	assert.NotContains(t, err.Error(), "wrong")
	assert.Less(t, time.Since(start), 10*time.Second)

	c.KafkaSASLMechanism = "SCRAM-SHA-512" // the user exists for SCRAM-SHA-256 only
	c.KafkaSASLPassword = "right"
	require.NoError(t, c.ValidateConnection())
	assert.ErrorIs(t, c.CheckKafkaAuth(ctx), ErrKafkaAuth)

	// Unreachable brokers are left to the clients' retries.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	deadAddr := l.Addr().String()
	require.NoError(t, l.Close())
	c.KafkaBrokers = []string{deadAddr}
	require.NoError(t, c.ValidateConnection())
	assert.NoError(t, c.CheckKafkaAuth(ctx))

	// Nothing to check without TLS or SASL.
	d := Default()
	assert.NoError(t, d.CheckKafkaAuth(ctx))
}
