package metrics

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

const secret = "s3cr3t-Pa55"

// TestSecretsNeverLogged runs the real binary with the MySQL password given
// by flag, environment and file, at debug level, against servers that
// refuse the connection or deny the login, and checks that no output
// contains the password. The fake server checks the login's scramble, so
// the password provably reached the process and was used.
func TestSecretsNeverLogged(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds and runs the binary")
	}
	bin := filepath.Join(t.TempDir(), "binlog-router")
	build := exec.Command("go", "build", "-o", bin, "github.com/binlog-router/binlog-router/cmd/binlog-router")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	mysql := startDenyingMySQL(t)
	pwFile := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(pwFile, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	common := []string{"run", "--kafka-brokers", "127.0.0.1:1", "--outbox-table", "app.outbox", "--log-level", "debug"}
	cases := []struct {
		name   string
		args   []string
		env    []string
		expect string // proves the run got as far as the case means to
		login  bool   // the fake server must see a login with the password
	}{
		{"flag, refused", []string{"--mysql-addr", "127.0.0.1:1", "--mysql-password", secret}, nil, "connection refused", false},
		{"flag, access denied", []string{"--mysql-addr", mysql.addr, "--mysql-password", secret}, nil, "Access denied", true},
		{"env, access denied, console", []string{"--mysql-addr", mysql.addr, "--log-format", "console"},
			[]string{"BINLOG_ROUTER_MYSQL_PASSWORD=" + secret}, "Access denied", true},
		{"file, access denied", []string{"--mysql-addr", mysql.addr, "--mysql-password-file", pwFile}, nil, "Access denied", true},
		{"env, refused", []string{"--mysql-addr", "127.0.0.1:1"}, []string{"BINLOG_ROUTER_MYSQL_PASSWORD=" + secret}, "connection refused", false},
		{"flag, invalid configuration", []string{"--mysql-addr", mysql.addr, "--mysql-password", secret, "--delivery", "bogus"}, nil, "bogus", false},
		{"env, unknown flag", []string{"--no-such-flag"}, []string{"BINLOG_ROUTER_MYSQL_PASSWORD=" + secret}, "no-such-flag", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := mysql.logins.Load()
			out := runBinary(t, bin, append(append([]string{}, common...), c.args...), c.env)
			if !strings.Contains(out, c.expect) {
				t.Fatalf("output lacks %q, so the run did not go as planned:\n%s", c.expect, out)
			}
			if c.login && mysql.logins.Load() == before {
				t.Fatalf("the fake server saw no login with the password:\n%s", out)
			}
			for _, part := range []string{secret, "s3cr3t", "Pa55"} {
				if strings.Contains(out, part) {
					t.Fatalf("output contains %q:\n%s", part, out)
				}
			}
		})
	}
}

// runBinary runs bin and returns its stdout and stderr. The router fails
// fast on these errors; a run that does not is stopped with SIGTERM after
// a few seconds (and killed after a few more), and its output is checked
// all the same.
func runBinary(t *testing.T, bin string, args, env []string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BINLOG_ROUTER_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running %s: %v", bin, err)
	}
	out := stdout.String() + stderr.String()
	if strings.TrimSpace(out) == "" {
		t.Fatalf("no output at all (%v)", err)
	}
	return out
}

// denyingMySQL speaks just enough of the MySQL protocol to receive a
// mysql_native_password login and deny it. It counts logins whose
// scramble matches secret.
type denyingMySQL struct {
	addr   string
	logins atomic.Int64
}

func startDenyingMySQL(t *testing.T) *denyingMySQL {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &denyingMySQL{addr: ln.Addr().String()}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			s.handle(conn)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
	})
	return s
}

func (s *denyingMySQL) handle(conn net.Conn) {
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	salt := make([]byte, 20)
	_, _ = rand.Read(salt)
	for i := range salt { // the scramble must not contain NUL
		salt[i] = salt[i]%94 + 33
	}
	const (
		clientLongPassword  = 0x1
		clientProtocol41    = 0x200
		clientTransactions  = 0x2000
		clientSecureConn    = 0x8000
		clientPluginAuth    = 0x80000
		serverCapabilities  = clientLongPassword | clientProtocol41 | clientTransactions | clientSecureConn | clientPluginAuth
		nativePasswordAuth  = "mysql_native_password"
		accessDeniedMessage = "Access denied for user 'root'@'127.0.0.1' (using password: YES)"
	)
	var hs []byte
	hs = append(hs, 10)                          // protocol version
	hs = append(hs, "8.0.36-fake\x00"...)        // server version
	hs = binary.LittleEndian.AppendUint32(hs, 1) // connection id
	hs = append(hs, salt[:8]...)
	hs = append(hs, 0)
	hs = binary.LittleEndian.AppendUint16(hs, serverCapabilities&0xffff)
	hs = append(hs, 255) // utf8mb4_0900_ai_ci
	hs = binary.LittleEndian.AppendUint16(hs, 2)
	hs = binary.LittleEndian.AppendUint16(hs, serverCapabilities>>16)
	hs = append(hs, 21)
	hs = append(hs, make([]byte, 10)...)
	hs = append(hs, salt[8:]...)
	hs = append(hs, 0)
	hs = append(hs, nativePasswordAuth+"\x00"...)
	if writePacket(conn, 0, hs) != nil {
		return
	}

	resp, seq, err := readPacket(conn)
	if err != nil || len(resp) < 32 {
		return
	}
	rest := resp[32:] // capabilities 4, max packet 4, charset 1, filler 23
	user, rest, ok := bytes.Cut(rest, []byte{0})
	if ok && string(user) == "root" && len(rest) > 0 && int(rest[0]) < len(rest) {
		if bytes.Equal(rest[1:1+int(rest[0])], nativeScramble(salt, secret)) {
			s.logins.Add(1)
		}
	}

	var deny []byte
	deny = append(deny, 0xff)
	deny = binary.LittleEndian.AppendUint16(deny, 1045)
	deny = append(deny, "#28000"+accessDeniedMessage...)
	_ = writePacket(conn, seq+1, deny)
}

// nativeScramble is mysql_native_password's response:
// SHA1(password) XOR SHA1(salt + SHA1(SHA1(password))).
func nativeScramble(salt []byte, password string) []byte {
	h1 := sha1.Sum([]byte(password))
	h2 := sha1.Sum(h1[:])
	h3 := sha1.Sum(append(append([]byte{}, salt...), h2[:]...))
	out := make([]byte, len(h1))
	for i := range h1 {
		out[i] = h1[i] ^ h3[i]
	}
	return out
}

func writePacket(w io.Writer, seq byte, payload []byte) error {
	hdr := []byte{byte(len(payload)), byte(len(payload) >> 8), byte(len(payload) >> 16), seq}
	_, err := w.Write(append(hdr, payload...))
	return err
}

func readPacket(r io.Reader) ([]byte, byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, 0, err
	}
	n := int(hdr[0]) | int(hdr[1])<<8 | int(hdr[2])<<16
	payload := make([]byte, n)
	_, err := io.ReadFull(r, payload)
	return payload, hdr[3], err
}
