// Package ferrettest runs FerretDB, a MongoDB wire-protocol server on
// SQLite, for tests that need a real Mongo wire server: no MongoDB server
// can run here.
//
// FerretDB runs as its own process (scripts/ferretdb, built once per test
// process), not inside the test binary: under the race detector an
// embedded FerretDB and its SQLite engine were instrumented too, which made
// every store operation several times slower, and the test binaries built
// all of FerretDB with -race.
package ferrettest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// startTimeout bounds building the binary (a cold build cache compiles
// FerretDB) and the server's start.
const startTimeout = 5 * time.Minute

var build struct {
	once sync.Once
	path string
	err  error
	dir  string
}

// binary builds scripts/ferretdb once per process, without the race
// detector, into a temporary directory removed by [Cleanup]. The build is
// bounded by startTimeout, not by the first caller's context, whose end
// must not fail every later caller.
func binary() (string, error) {
	build.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
		defer cancel()
		out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
		if err != nil {
			build.err = fmt.Errorf("go env GOMOD: %w", err)
			return
		}
		root := filepath.Dir(strings.TrimSpace(string(out)))
		if build.dir, build.err = os.MkdirTemp("", "agents-mcp-ferretdb-bin-"); build.err != nil {
			return
		}
		build.path = filepath.Join(build.dir, "ferretdb")
		cmd := exec.CommandContext(ctx, "go", "build", "-o", build.path, "./scripts/ferretdb")
		cmd.Dir = root
		// The test binary may run under -race; FerretDB need not.
		cmd.Env = append(os.Environ(), "GOFLAGS=")
		if out, err := cmd.CombinedOutput(); err != nil {
			build.err = fmt.Errorf("go build ./scripts/ferretdb: %w\n%s", err, out)
		}
	})
	return build.path, build.err
}

// Cleanup removes the binary built by [Start]; a TestMain calls it after
// m.Run.
func Cleanup() {
	if build.dir != "" {
		os.RemoveAll(build.dir)
	}
}

// Server is a FerretDB process.
type Server struct {
	// URI is its MongoDB connection string.
	URI      string
	cmd      *exec.Cmd
	dir      string // its data, removed by Stop
	done     chan error
	stopOnce sync.Once
}

// Start starts a FerretDB process on a free loopback port with its data in
// a temporary directory that [Server.Stop] removes. The process is killed
// if the test process dies first.
func Start(ctx context.Context) (*Server, error) {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	bin, err := binary()
	if err != nil {
		return nil, err
	}
	// The data directory is ours to remove: the process removes its own
	// default one only when it stops on a signal it can catch.
	dir, err := os.MkdirTemp("", "agents-mcp-ferretdb-")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-dir", dir)
	cmd.Stderr = os.Stderr // only FerretDB's own errors: see scripts/ferretdb
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start ferretdb: %w", err)
	}
	s := &Server{cmd: cmd, dir: dir, done: make(chan error, 1)}
	first := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			first <- sc.Text()
		}
		close(first)
		for sc.Scan() { // keep the pipe drained until the process ends
		}
		s.done <- cmd.Wait()
	}()
	select {
	case line, ok := <-first:
		if !ok || !strings.HasPrefix(line, "mongodb://") {
			s.Stop()
			return nil, fmt.Errorf("ferretdb did not print its URI (first line %q)", line)
		}
		s.URI = line
		return s, nil
	case <-ctx.Done():
		s.Stop()
		return nil, fmt.Errorf("ferretdb did not start: %w", ctx.Err())
	}
}

// Stop stops the process (SIGTERM, then SIGKILL after 10 s), waits for
// it and removes its data; later calls do nothing.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
		}
		os.RemoveAll(s.dir)
	})
}

// StartT starts a FerretDB process for t, stopped when t ends, and returns
// its URI.
func StartT(t testing.TB) string {
	t.Helper()
	s, err := Start(t.Context())
	if err != nil {
		t.Fatalf("FerretDB: %v", err)
	}
	t.Cleanup(s.Stop)
	return s.URI
}
