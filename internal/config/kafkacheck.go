package config

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/kafka"
)

// ErrKafkaAuth means the Kafka brokers refused the router's credentials
// (SASL) or the TLS handshake failed on a certificate: retrying cannot
// help.
var ErrKafkaAuth = errors.New("kafka: authentication failed")

// kafkaCheckTimeout bounds CheckKafkaAuth.
const kafkaCheckTimeout = 15 * time.Second

// CheckKafkaAuth connects once to the brokers with KafkaOpts and returns an
// error wrapping ErrKafkaAuth, saying what to fix, if they refuse the SASL
// credentials or a TLS certificate does not verify. Brokers that cannot be
// reached (or answer within 15s) are not an error here: the clients retry
// those as usual. Call it at startup, so a wrong password stops the router
// at once with a clear message.
func (c *Config) CheckKafkaAuth(ctx context.Context) error {
	sec := c.resolved()
	if sec.err != nil {
		return sec.err
	}
	if sec.kafkaTLS == nil && sec.kafkaSASL == nil {
		return nil
	}
	hook := &saslReadHook{}
	cl, err := kafka.NewClient(append(c.KafkaOpts(), kgo.WithHooks(hook))...)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, kafkaCheckTimeout)
	defer cancel()
	err = cl.Ping(ctx)
	if err == nil || ctx.Err() != nil {
		return nil
	}
	brokers := strings.Join(c.KafkaBrokers, ",")
	mech := strings.ToUpper(c.KafkaSASLMechanism)
	var certErr *tls.CertificateVerificationError
	var hostErr x509.HostnameError
	var authorityErr x509.UnknownAuthorityError
	var recordErr tls.RecordHeaderError
	switch {
	case errors.Is(err, kerr.SaslAuthenticationFailed), hook.failed():
		return &kafkaAuthError{err: err, msg: fmt.Sprintf("SASL authentication failed: the Kafka brokers (%s) refused user %q with %s: check --kafka-sasl-user and the password (%s or --kafka-sasl-password-file)",
			brokers, c.KafkaSASLUser, mech, EnvName("kafka-sasl-password"))}
	case errors.Is(err, kerr.UnsupportedSaslMechanism), errors.Is(err, kerr.IllegalSaslState):
		return &kafkaAuthError{err: err, msg: fmt.Sprintf("SASL authentication failed: the Kafka brokers (%s) do not accept mechanism %s: check --kafka-sasl-mechanism", brokers, mech)}
	case errors.As(err, &certErr), errors.As(err, &hostErr), errors.As(err, &authorityErr):
		return &kafkaAuthError{err: err, msg: fmt.Sprintf("TLS to the Kafka brokers (%s) failed: their certificate does not verify: check --kafka-tls-ca and --kafka-tls-server-name", brokers)}
	case strings.Contains(err.Error(), "remote error: tls: "):
		// An alert from the broker during the handshake (Go's alert type is
		// not exported): with TLS 1.3 it comes on the first read, after the
		// client thought the handshake done.
		return &kafkaAuthError{err: err, msg: fmt.Sprintf("TLS to the Kafka brokers (%s) failed: they refused the handshake: if they require client certificates, set --kafka-tls-cert and --kafka-tls-key to a certificate signed by a CA they trust", brokers)}
	case errors.As(err, &recordErr):
		return &kafkaAuthError{err: err, msg: fmt.Sprintf("TLS to the Kafka brokers (%s) failed: they do not speak TLS on this port: use their TLS listener or drop --kafka-tls", brokers)}
	}
	return nil
}

// kafkaAuthError is an ErrKafkaAuth with what to fix and the client's error.
type kafkaAuthError struct {
	msg string
	err error
}

func (e *kafkaAuthError) Error() string   { return e.msg + ": " + e.err.Error() }
func (e *kafkaAuthError) Unwrap() []error { return []error{ErrKafkaAuth, e.err} }

// saslReadHook notices a broker closing the connection in answer to SASL
// credentials, which is how some brokers (and kfake) refuse them instead
// of answering SASL_AUTHENTICATION_FAILED.
type saslReadHook struct {
	mu  sync.Mutex
	err error
}

var _ kgo.HookBrokerE2E = (*saslReadHook)(nil)

const saslAuthenticateKey = 36 // SaslAuthenticate request key

func (h *saslReadHook) OnBrokerE2E(_ kgo.BrokerMetadata, key int16, e2e kgo.BrokerE2E) {
	if key == saslAuthenticateKey && (errors.Is(e2e.ReadErr, io.EOF) || errors.Is(e2e.ReadErr, syscall.ECONNRESET)) {
		h.mu.Lock()
		h.err = e2e.ReadErr
		h.mu.Unlock()
	}
}

func (h *saslReadHook) failed() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err != nil
}
