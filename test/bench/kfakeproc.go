package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// kfakeProc is the test/kfakeserver process: a kfake Kafka cluster in its
// own process, so its CPU and memory are not the benchmark's.
type kfakeProc struct {
	cmd     *exec.Cmd
	Brokers []string
	done    chan struct{}
	waitErr error
}

// startKfake runs bin and waits for its BROKERS= line. Its stderr goes to
// logPath.
func startKfake(ctx context.Context, bin string, partitions int, logPath string) (*kfakeProc, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("creating kfake log: %w", err)
	}
	cmd := exec.Command(bin, "-partitions", strconv.Itoa(partitions))
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		logf.Close()
		return nil, fmt.Errorf("kfake stdout: %w", err)
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("starting kfakeserver: %w", err)
	}
	k := &kfakeProc{cmd: cmd, done: make(chan struct{})}
	brokers := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if line := sc.Text(); strings.HasPrefix(line, "BROKERS=") {
				brokers <- strings.TrimPrefix(line, "BROKERS=")
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		k.waitErr = cmd.Wait()
		logf.Close()
		close(k.done)
	}()
	select {
	case b := <-brokers:
		k.Brokers = strings.Split(b, ",")
		return k, nil
	case <-k.done:
		return nil, fmt.Errorf("kfakeserver exited before listing its brokers: %v (log %s)", k.waitErr, logPath)
	case <-time.After(30 * time.Second):
		err = errors.New("kfakeserver printed no BROKERS= line within 30s")
	case <-ctx.Done():
		err = ctx.Err()
	}
	k.Close()
	return nil, err
}

// Pid is the process id, for CPU accounting.
func (k *kfakeProc) Pid() int { return k.cmd.Process.Pid }

// Close stops the process: SIGTERM, then SIGKILL after 10 s.
func (k *kfakeProc) Close() {
	_ = k.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-k.done:
	case <-time.After(10 * time.Second):
		_ = k.cmd.Process.Kill()
		<-k.done
	}
}
