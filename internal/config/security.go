package config

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// MySQL TLS modes (--mysql-tls), named after the mysql client's --ssl-mode.
const (
	// MySQLTLSDisabled connects over plain TCP (the default).
	MySQLTLSDisabled = "disabled"
	// MySQLTLSRequired encrypts but does not verify the server certificate:
	// it protects against eavesdropping, not against impersonation.
	MySQLTLSRequired = "required"
	// MySQLTLSVerifyCA also verifies that --mysql-tls-ca signed the server
	// certificate, but not the name in it.
	MySQLTLSVerifyCA = "verify-ca"
	// MySQLTLSVerifyIdentity also verifies that the certificate names the
	// server (--mysql-tls-server-name, default the host of --mysql-addr).
	MySQLTLSVerifyIdentity = "verify-identity"
)

// mysqlTLSPreferred is the mysql client's opportunistic mode, refused here:
// it falls back to plain TCP whenever the server (or anyone in the middle)
// says it has no TLS, so it gives no guarantee at all.
const mysqlTLSPreferred = "preferred"

// Kafka SASL mechanisms (--kafka-sasl-mechanism).
const (
	SASLPlain       = "PLAIN"
	SASLScramSHA256 = "SCRAM-SHA-256"
	SASLScramSHA512 = "SCRAM-SHA-512"
)

// security is what ValidateConnection resolved: the secrets read and the
// TLS and SASL settings built.
type security struct {
	mysqlTLSConfig *tls.Config
	kafkaTLS       *tls.Config
	kafkaSASL      sasl.Mechanism
	err            error
}

// ValidateConnection checks the connection settings (secrets, TLS, SASL),
// reads the secret files and builds the TLS and SASL settings used by
// KafkaOpts and ReaderConfig. Validate calls it; commands that only
// connect to Kafka (checkpoint show) call it instead of Validate.
func (c *Config) ValidateConnection() error {
	var errs []error
	if c.MySQLPasswordFile != "" {
		p, err := readSecret("--mysql-password-file", c.MySQLPasswordFile)
		switch {
		case err != nil:
			errs = append(errs, err)
		case c.MySQLPassword != "" && c.MySQLPassword != p:
			// (Equal means this ran before and already read the file.)
			errs = append(errs, fmt.Errorf("both --mysql-password (or %s) and --mysql-password-file are set: keep one", EnvName("mysql-password")))
		default:
			c.MySQLPassword = p
		}
	}
	s := &security{}
	var err error
	if s.mysqlTLSConfig, err = c.MySQLTLS(); err != nil {
		errs = append(errs, err)
	}
	if s.kafkaTLS, err = c.KafkaTLSConfig(); err != nil {
		errs = append(errs, err)
	}
	if s.kafkaSASL, err = c.KafkaSASL(); err != nil {
		errs = append(errs, err)
	}
	s.err = errors.Join(errs...)
	c.sec = s
	return s.err
}

// resolved returns what ValidateConnection resolved, resolving now if it
// was not called (which is not safe for concurrent use: call Validate
// first).
func (c *Config) resolved() *security {
	if c.sec == nil {
		_ = c.ValidateConnection()
	}
	return c.sec
}

// Warnings are settings that work but weaken security, to be logged at
// startup.
func (c *Config) Warnings() []string {
	var w []string
	if normalizeTLSMode(c.MySQLTLSMode) == MySQLTLSRequired {
		w = append(w, "--mysql-tls=required encrypts but does not verify the server certificate: use verify-identity with --mysql-tls-ca to be safe from impersonation")
	}
	if c.KafkaTLS && c.KafkaTLSInsecureSkipVerify {
		w = append(w, "--kafka-tls-insecure-skip-verify: the brokers' certificates are not verified; anyone on the network path can impersonate them and read the records and the SASL password")
	}
	if strings.EqualFold(c.KafkaSASLMechanism, SASLPlain) && !c.KafkaTLS {
		w = append(w, "--kafka-sasl-mechanism=PLAIN without --kafka-tls sends the password in clear text: add --kafka-tls or use SCRAM-SHA-512")
	}
	return w
}

func normalizeTLSMode(m string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(m)), "_", "-")
}

// MySQLTLS checks the --mysql-tls* flags and builds the TLS settings of the
// MySQL connections (SQL and replication); nil means plain TCP.
func (c *Config) MySQLTLS() (*tls.Config, error) {
	mode := normalizeTLSMode(c.MySQLTLSMode)
	switch mode {
	case "", MySQLTLSDisabled:
		var set []string
		for _, f := range []struct{ name, v string }{
			{"--mysql-tls-ca", c.MySQLTLSCA}, {"--mysql-tls-cert", c.MySQLTLSCert},
			{"--mysql-tls-key", c.MySQLTLSKey}, {"--mysql-tls-server-name", c.MySQLTLSServerName},
		} {
			if f.v != "" {
				set = append(set, f.name)
			}
		}
		if len(set) > 0 {
			return nil, fmt.Errorf("%s set but --mysql-tls is disabled: set --mysql-tls verify-identity (or verify-ca, required)", strings.Join(set, ", "))
		}
		return nil, nil
	case mysqlTLSPreferred:
		return nil, errors.New("--mysql-tls preferred is not supported: it silently falls back to plain TCP when the server offers no TLS; use required (encrypted, server not verified) or verify-identity (encrypted and verified)")
	case MySQLTLSRequired, MySQLTLSVerifyCA, MySQLTLSVerifyIdentity:
	default:
		return nil, fmt.Errorf("--mysql-tls %q: use disabled, required, verify-ca or verify-identity", c.MySQLTLSMode)
	}
	var errs []error
	if mode == MySQLTLSRequired && c.MySQLTLSCA != "" {
		errs = append(errs, errors.New("--mysql-tls-ca is not used with --mysql-tls=required, which does not verify the server: use --mysql-tls verify-ca or verify-identity"))
	}
	if mode == MySQLTLSVerifyCA && c.MySQLTLSCA == "" {
		errs = append(errs, errors.New("--mysql-tls=verify-ca needs --mysql-tls-ca, the CA certificates that sign the server certificate"))
	}
	if mode != MySQLTLSVerifyIdentity && c.MySQLTLSServerName != "" {
		errs = append(errs, fmt.Errorf("--mysql-tls-server-name is only checked with --mysql-tls=verify-identity, not %s", mode))
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if err := loadKeyPair(cfg, "--mysql-tls-cert", c.MySQLTLSCert, "--mysql-tls-key", c.MySQLTLSKey); err != nil {
		errs = append(errs, err)
	}
	var roots *x509.CertPool
	if c.MySQLTLSCA != "" && mode != MySQLTLSRequired {
		var err error
		if roots, err = loadCAs("--mysql-tls-ca", c.MySQLTLSCA); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	switch mode {
	case MySQLTLSRequired:
		cfg.InsecureSkipVerify = true
	case MySQLTLSVerifyCA:
		// Chain verification without the name check: crypto/tls has no
		// such mode, so skip its verification and do the chain here.
		cfg.InsecureSkipVerify = true
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			return verifyChain(cs, roots, "--mysql-tls-ca "+c.MySQLTLSCA)
		}
	case MySQLTLSVerifyIdentity:
		cfg.RootCAs = roots // nil: the system roots
		cfg.ServerName = c.MySQLTLSServerName
		if cfg.ServerName == "" {
			host, _, err := net.SplitHostPort(c.MySQLAddr)
			if err != nil {
				return nil, fmt.Errorf("--mysql-tls=verify-identity: cannot take the server name from --mysql-addr %q (%v): set --mysql-tls-server-name", c.MySQLAddr, err)
			}
			cfg.ServerName = host
		}
	}
	return cfg, nil
}

// verifyChain verifies the peer's certificate chain against roots without
// checking the name.
func verifyChain(cs tls.ConnectionState, roots *x509.CertPool, what string) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("the server sent no certificate")
	}
	opts := x509.VerifyOptions{Roots: roots, Intermediates: x509.NewCertPool()}
	for _, ic := range cs.PeerCertificates[1:] {
		opts.Intermediates.AddCert(ic)
	}
	if _, err := cs.PeerCertificates[0].Verify(opts); err != nil {
		return fmt.Errorf("server certificate not signed by %s: %w", what, err)
	}
	return nil
}

// KafkaTLSConfig checks the --kafka-tls* flags and builds the TLS settings
// of the Kafka connections; nil means plain TCP.
func (c *Config) KafkaTLSConfig() (*tls.Config, error) {
	if !c.KafkaTLS {
		var set []string
		for _, f := range []struct {
			name string
			set  bool
		}{
			{"--kafka-tls-ca", c.KafkaTLSCA != ""}, {"--kafka-tls-cert", c.KafkaTLSCert != ""},
			{"--kafka-tls-key", c.KafkaTLSKey != ""}, {"--kafka-tls-server-name", c.KafkaTLSServerName != ""},
			{"--kafka-tls-insecure-skip-verify", c.KafkaTLSInsecureSkipVerify},
		} {
			if f.set {
				set = append(set, f.name)
			}
		}
		if len(set) > 0 {
			return nil, fmt.Errorf("%s set without --kafka-tls: add --kafka-tls", strings.Join(set, ", "))
		}
		return nil, nil
	}
	var errs []error
	if c.KafkaTLSInsecureSkipVerify && c.KafkaTLSCA != "" {
		errs = append(errs, errors.New("--kafka-tls-insecure-skip-verify turns off the verification --kafka-tls-ca is for: drop one of them"))
	}
	if c.KafkaTLSInsecureSkipVerify && c.KafkaTLSServerName != "" {
		errs = append(errs, errors.New("--kafka-tls-insecure-skip-verify turns off the name check --kafka-tls-server-name is for: drop one of them"))
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.KafkaTLSServerName, InsecureSkipVerify: c.KafkaTLSInsecureSkipVerify}
	if err := loadKeyPair(cfg, "--kafka-tls-cert", c.KafkaTLSCert, "--kafka-tls-key", c.KafkaTLSKey); err != nil {
		errs = append(errs, err)
	}
	if c.KafkaTLSCA != "" && !c.KafkaTLSInsecureSkipVerify {
		roots, err := loadCAs("--kafka-tls-ca", c.KafkaTLSCA)
		if err != nil {
			errs = append(errs, err)
		}
		cfg.RootCAs = roots
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return cfg, nil
}

// KafkaSASL checks the --kafka-sasl* flags, reads the password file and
// returns the SASL mechanism; nil means no SASL.
func (c *Config) KafkaSASL() (sasl.Mechanism, error) {
	mech := strings.ToUpper(strings.TrimSpace(c.KafkaSASLMechanism))
	if mech == "" {
		var set []string
		for _, f := range []struct{ name, v string }{
			{"--kafka-sasl-user", c.KafkaSASLUser}, {"--kafka-sasl-password", c.KafkaSASLPassword},
			{"--kafka-sasl-password-file", c.KafkaSASLPasswordFile},
		} {
			if f.v != "" {
				set = append(set, f.name)
			}
		}
		if len(set) > 0 {
			return nil, fmt.Errorf("%s set without --kafka-sasl-mechanism: set it to PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", strings.Join(set, ", "))
		}
		return nil, nil
	}
	var errs []error
	if mech != SASLPlain && mech != SASLScramSHA256 && mech != SASLScramSHA512 {
		errs = append(errs, fmt.Errorf("--kafka-sasl-mechanism %q: use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", c.KafkaSASLMechanism))
	}
	if c.KafkaSASLUser == "" {
		errs = append(errs, fmt.Errorf("--kafka-sasl-mechanism %s needs --kafka-sasl-user", mech))
	}
	pass := c.KafkaSASLPassword
	switch {
	case c.KafkaSASLPasswordFile != "" && pass != "":
		errs = append(errs, fmt.Errorf("both --kafka-sasl-password (or %s) and --kafka-sasl-password-file are set: keep one", EnvName("kafka-sasl-password")))
	case c.KafkaSASLPasswordFile != "":
		p, err := readSecret("--kafka-sasl-password-file", c.KafkaSASLPasswordFile)
		if err != nil {
			errs = append(errs, err)
		} else if p == "" {
			errs = append(errs, fmt.Errorf("--kafka-sasl-password-file %s is empty", c.KafkaSASLPasswordFile))
		}
		pass = p
	case pass == "":
		errs = append(errs, fmt.Errorf("--kafka-sasl-mechanism %s needs a password: set %s or --kafka-sasl-password-file", mech, EnvName("kafka-sasl-password")))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	switch mech {
	case SASLPlain:
		return plain.Auth{User: c.KafkaSASLUser, Pass: pass}.AsMechanism(), nil
	case SASLScramSHA256:
		return scram.Auth{User: c.KafkaSASLUser, Pass: pass}.AsSha256Mechanism(), nil
	default:
		return scram.Auth{User: c.KafkaSASLUser, Pass: pass}.AsSha512Mechanism(), nil
	}
}

// readSecret reads a secret file, dropping one trailing line end.
func readSecret(flagName, path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", flagName, err)
	}
	return strings.TrimRight(string(b), "\r\n"), nil
}

// loadKeyPair sets cfg's client certificate from a PEM certificate and key
// file; both or neither must be given.
func loadKeyPair(cfg *tls.Config, certFlag, certFile, keyFlag, keyFile string) error {
	switch {
	case certFile == "" && keyFile == "":
		return nil
	case certFile == "":
		return fmt.Errorf("%s needs %s, the client certificate", keyFlag, certFlag)
	case keyFile == "":
		return fmt.Errorf("%s needs %s, its private key", certFlag, keyFlag)
	}
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return fmt.Errorf("%s %s, %s %s: %w", certFlag, certFile, keyFlag, keyFile, err)
	}
	cfg.Certificates = []tls.Certificate{pair}
	return nil
}

// loadCAs reads a PEM bundle of CA certificates.
func loadCAs(flagName, path string) (*x509.CertPool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flagName, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s %s: no PEM certificate in the file", flagName, path)
	}
	return pool, nil
}
