package test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/test/harness"
)

// securedListener is the name (and security protocol) of the secured
// Apache Kafka listener: TLS with the test CA, client certificates
// required, SCRAM-SHA-512.
const securedListener = "SASL_SSL"

// securedKafka is a private Apache Kafka node with a SASL_SSL listener
// beside its PLAINTEXT one (inter-broker and controller traffic, and the
// test's own administration when ACLs are on).
type securedKafka struct {
	*devenv.Kafka
	pki     *testPKI
	secured []string // the SASL_SSL addresses
	tls     *tls.Config
}

// securedKafkaConfig says what startSecuredKafka sets up.
type securedKafkaConfig struct {
	// scram are the SCRAM-SHA-512 users created when the storage is
	// formatted (kafka-storage format --add-scram): name -> password.
	scram map[string]string
	// acls switches on StandardAuthorizer; super users are admin (on
	// SASL_SSL) and ANONYMOUS (the PLAINTEXT listener: the broker's own
	// controller and inter-broker traffic, and the test's setup).
	acls bool
}

// startSecuredKafka starts the node (on the Apache pass only).
func startSecuredKafka(t *testing.T, cfg securedKafkaConfig) *securedKafka {
	t.Helper()
	dir := t.TempDir()
	pki := newTestPKI(t, dir, "kafka-ca")
	read := func(p string) string {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		// Java properties: \n in a value is a newline.
		return strings.ReplaceAll(strings.TrimSpace(string(b)), "\n", `\n`)
	}
	l := "listener.name." + strings.ToLower(securedListener) + "."
	props := map[string]string{
		"sasl.enabled.mechanisms":            "SCRAM-SHA-512",
		l + "scram-sha-512.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required;",
		l + "ssl.keystore.type":              "PEM",
		l + "ssl.keystore.certificate.chain": read(pki.serverCert),
		l + "ssl.keystore.key":               read(pki.serverKey),
		l + "ssl.truststore.type":            "PEM",
		l + "ssl.truststore.certificates":    read(pki.caFile),
		l + "ssl.client.auth":                "required",
	}
	if cfg.acls {
		props["authorizer.class.name"] = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
		props["super.users"] = "User:admin;User:ANONYMOUS"
	}
	var format []string
	for name, pw := range cfg.scram {
		format = append(format, "--add-scram", fmt.Sprintf("SCRAM-SHA-512=[name=%s,password=%s]", name, pw))
	}
	k := harness.PrivateApache(t, devenv.ApacheKafkaConfig{
		ExtraListeners: map[string]string{securedListener: securedListener},
		Props:          props,
		FormatArgs:     format,
	})
	clientPair, err := tls.LoadX509KeyPair(pki.clientCert, pki.clientKey)
	require.NoError(t, err)
	roots := x509.NewCertPool()
	roots.AddCert(pki.ca)
	return &securedKafka{Kafka: k, pki: pki, secured: k.Apache.ListenerAddrs(securedListener),
		tls: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{clientPair}, MinVersion: tls.VersionTLS12}}
}

// routerTLS are the router's flags for the SASL_SSL listener as user.
func (s *securedKafka) routerTLS(t *testing.T, user, password string) []string {
	return []string{"--kafka-tls", "--kafka-tls-ca", s.pki.caFile,
		"--kafka-tls-cert", s.pki.clientCert, "--kafka-tls-key", s.pki.clientKey,
		"--kafka-sasl-mechanism", "SCRAM-SHA-512", "--kafka-sasl-user", user,
		"--kafka-sasl-password-file", writeSecret(t, t.TempDir(), "kafka-password", password+"\n")}
}

// client opens a client of the SASL_SSL listener as user.
func (s *securedKafka) client(t *testing.T, user, password string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(s.secured...), kgo.DialTLSConfig(s.tls),
		saslMechanism("SCRAM-SHA-512", user, password)}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	return cl
}

// addScramUser creates a SCRAM-SHA-512 user with kafka-configs
// (ConfigCommand) over the PLAINTEXT listener, and waits until it can
// authenticate on the SASL_SSL listener.
func (s *securedKafka) addScramUser(t *testing.T, user, password string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := s.Apache.RunTool(ctx, "org.apache.kafka.tools.ConfigCommand", "--bootstrap-server", s.Apache.Brokers()[0],
		"--alter", "--entity-type", "users", "--entity-name", user,
		"--add-config", fmt.Sprintf("SCRAM-SHA-512=[iterations=8192,password=%s]", password))
	require.NoError(t, err, out)
	cl := s.client(t, user, password)
	harness.Eventually(t, 60*time.Second, "user "+user+" authenticates", func() bool {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		return cl.Ping(rctx) == nil
	})
}

// TestApacheSASLSSL: on Apache Kafka's SASL_SSL listener (TLS with a test
// CA, client certificates required, SCRAM-SHA-512 users made by
// kafka-storage format --add-scram and by kafka-configs), the router
// routes rows end to end, validate and checkpoint show work over it, and
// a consumer authenticated as another user reads the rows. A wrong
// password exits 1 within seconds saying SASL authentication failed, and
// a CA that did not sign the broker's certificate exits 1 saying so.
func TestApacheSASLSSL(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	s := startSecuredKafka(t, securedKafkaConfig{scram: map[string]string{"router": "r0uter-s3cret"}})
	s.addScramUser(t, "reader", "r3ader-s3cret")
	e.Kafka = &devenv.Kafka{Brokers: s.secured, Apache: s.Apache}
	evs := []harness.Event{harness.NewEvent("ssl-1", "SASLSSLRouted", `{"n":1}`), harness.NewEvent("ssl-2", "SASLSSLRouted", `{"n":2}`)}
	e.InsertTx(evs[0])
	auth := s.routerTLS(t, "router", "r0uter-s3cret")

	start := time.Now()
	r := harness.StartRouter(t, e.Args("sasl-ssl", auth...)...)
	e.InsertTx(evs[1])
	c := harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex(), kgo.DialTLSConfig(s.tls), saslMechanism("SCRAM-SHA-512", "reader", "r3ader-s3cret"))
	recs := c.Read(len(evs), 90*time.Second)
	took := time.Since(start)
	assert.ElementsMatch(t, []string{evs[0].ID, evs[1].ID}, harness.RecordIDs(recs))
	cp := checkpointShow(t, e, "sasl-ssl", 60*time.Second, auth...)
	assert.Contains(t, cp, `"name": "sasl-ssl"`)
	require.Equal(t, 0, r.Stop(20*time.Second))
	assert.NotContains(t, r.Out.String(), "r0uter-s3cret", "the password is never logged")

	v := runValidate(t, nil, e.Args("sasl-ssl", auth...)...)
	assert.Contains(t, v.line("OK", "kafka"), "1 broker(s)")
	assert.Regexp(t, `\[0-1-\d+\] written`, v.line("OK", "checkpoint"))
	t.Logf("%s over %s: %d records routed and read back in %s", harness.BrokerName(), securedListener, len(recs), took.Round(time.Millisecond))

	t.Run("wrong password", func(t *testing.T) {
		start := time.Now()
		r := harness.StartRouter(t, e.Args("sasl-ssl-wrong", s.routerTLS(t, "router", "wrong-password")...)...)
		assert.Equal(t, 1, r.Wait(60*time.Second))
		took := time.Since(start)
		log := r.Out.String()
		assert.Less(t, took, 30*time.Second, "fails fast")
		assert.Regexp(t, regexp.MustCompile(`(?i)SASL authentication failed`), log)
		assert.LessOrEqual(t, strings.Count(log, "\n"), 30, "no log storm")
		t.Logf("exit 1 after %s, %d log lines:\n%s", took.Round(time.Millisecond), strings.Count(log, "\n"), log)
	})
	t.Run("wrong CA", func(t *testing.T) {
		other := newTestPKI(t, t.TempDir(), "other-ca")
		args := s.routerTLS(t, "router", "r0uter-s3cret")
		args[2] = other.caFile // --kafka-tls-ca
		start := time.Now()
		r := harness.StartRouter(t, e.Args("sasl-ssl-ca", args...)...)
		assert.Equal(t, 1, r.Wait(60*time.Second))
		assert.Less(t, time.Since(start), 30*time.Second, "fails fast")
		log := r.Out.String()
		assert.Contains(t, log, "TLS to the Kafka brokers")
		assert.Contains(t, log, "certificate signed by unknown authority")
	})
	t.Run("no client certificate", func(t *testing.T) {
		args := s.routerTLS(t, "router", "r0uter-s3cret")
		args = append(args[:3], args[7:]...) // drop --kafka-tls-cert and --kafka-tls-key
		require.NotContains(t, args, "--kafka-tls-cert")
		start := time.Now()
		r := harness.StartRouter(t, e.Args("sasl-ssl-nocert", args...)...)
		assert.Equal(t, 1, r.Wait(60*time.Second))
		assert.Less(t, time.Since(start), 30*time.Second, "fails fast")
		log := r.Out.String()
		assert.Contains(t, log, "TLS to the Kafka brokers")
		assert.Contains(t, log, "--kafka-tls-cert and --kafka-tls-key")
		assert.LessOrEqual(t, strings.Count(log, "\n"), 5, "no retries")
	})
}

// adminOf returns an admin client of the PLAINTEXT listener (ANONYMOUS is
// a super user there).
func adminOf(t *testing.T, k *devenv.Kafka) *kadm.Client {
	t.Helper()
	return harness.NewAdmin(t, k.Apache.Brokers())
}
