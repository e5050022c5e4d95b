package remote

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// EnvAllowlist names the variables a stdio child inherits from agents-mcp's
// environment; everything else it gets must be set in its config entry's
// env. Credentials of agents-mcp itself (API keys, MONGODB_URI, …) are thus
// never handed to upstream processes by accident.
var EnvAllowlist = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ",
	"TMPDIR", "TEMP", "TMP", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS",
	// Windows needs these to start most programs.
	"SYSTEMROOT", "SYSTEMDRIVE", "COMSPEC", "PATHEXT", "APPDATA", "LOCALAPPDATA", "USERPROFILE", "PROGRAMDATA",
}

// childEnv is the allowlisted part of the parent's environment plus extra,
// which wins.
func childEnv(extra map[string]string, lookup func(string) (string, bool)) []string {
	var env []string
	for _, k := range EnvAllowlist {
		if _, override := extra[k]; override {
			continue
		}
		if v, ok := lookup(k); ok {
			env = append(env, k+"="+v)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		env = append(env, k+"="+extra[k])
	}
	return env
}

// stopGrace is how long a stdio child gets to exit after its stdin is
// closed, and again after SIGTERM, before it is killed.
const stopGrace = 2 * time.Second

// process is one run of a stdio upstream's command, in its own process
// group so that everything it starts (npx starts node, shells start
// pipelines) can be stopped together.
type process struct {
	cmd *exec.Cmd
}

func (u *upstream) newProcess() (*process, error) {
	cmd := exec.Command(u.cfg.Command, u.cfg.Args...)
	cmd.Env = childEnv(u.cfg.Env, os.LookupEnv)
	cmd.Stderr = &lineLogger{log: u.log}
	// A grandchild that keeps stderr open must not make Wait hang.
	cmd.WaitDelay = stopGrace
	setProcessGroup(cmd)
	return &process{cmd: cmd}, nil
}

// transport starts the process on Connect. Closing the session closes the
// child's stdin, waits, sends SIGTERM, then SIGKILL, and reaps it (the
// shutdown sequence of the MCP stdio transport). It is go-sdk's
// CommandTransport, but for the bound on one message, which that one fixes
// at 16 MiB: a line of the child's output longer than limit is not read;
// the session ends there (limit.go), and the time is recorded in tooLarge.
func (p *process) transport(limit int64, tooLarge *atomic.Int64) mcp.Transport {
	return &commandTransport{cmd: p.cmd, limit: limit, tooLarge: tooLarge}
}

// commandTransport is [process.transport].
type commandTransport struct {
	cmd      *exec.Cmd
	limit    int64
	tooLarge *atomic.Int64
}

func (t *commandTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := t.cmd.Start(); err != nil {
		return nil, err
	}
	pipes := &mcp.IOTransport{
		// The session is closed by closing stdin (childStdin), not stdout.
		Reader: readCloser{Reader: &limitedMessages{r: stdout, limit: t.limit, tooLarge: t.tooLarge}, Closer: nopCloser{}},
		Writer: &childStdin{cmd: t.cmd, stdin: stdin},
		// limitedMessages cuts first; go-sdk's own bound stays above it.
		MaxLineLength: int(t.limit + eventSizeSlack),
	}
	return pipes.Connect(ctx)
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }

// childStdin is the child's stdin; closing it stops the child, as go-sdk's
// CommandTransport does: close stdin and wait stopGrace for the child to
// exit, then SIGTERM and wait again, then SIGKILL.
type childStdin struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

func (s *childStdin) Write(p []byte) (int, error) { return s.stdin.Write(p) }

func (s *childStdin) Close() error {
	if err := s.stdin.Close(); err != nil {
		return fmt.Errorf("closing stdin: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- s.cmd.Wait() }()
	wait := func() (error, bool) {
		select {
		case err := <-exited:
			return err, true
		case <-time.After(stopGrace):
			return nil, false
		}
	}
	if err, ok := wait(); ok {
		return err
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err == nil {
		if err, ok := wait(); ok {
			return err
		}
	}
	if err := s.cmd.Process.Kill(); err != nil {
		return err
	}
	if err, ok := wait(); ok {
		return err
	}
	return fmt.Errorf("the stdio upstream's process does not exit")
}

func (p *process) pid() int {
	if p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// kill kills what is left of the process group once the session is closed
// and the leader reaped: children the leader started and left behind.
func (p *process) kill(log *slog.Logger) {
	if pid := p.pid(); pid > 0 {
		if err := killProcessGroup(pid); err != nil {
			log.Warn("kill stdio process group", "pgid", pid, "error", err)
		}
	}
}

// lineLogger logs a child's stderr line by line under the upstream's name.
// Lines are cut at maxStderrLine so that a child writing without newlines
// cannot grow memory.
type lineLogger struct {
	log *slog.Logger
	mu  sync.Mutex
	buf []byte
}

const maxStderrLine = 4096

func (l *lineLogger) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			if len(l.buf) >= maxStderrLine {
				l.emit(l.buf[:maxStderrLine])
				l.buf = slices.Clone(l.buf[maxStderrLine:])
				continue
			}
			return len(p), nil
		}
		l.emit(l.buf[:i])
		l.buf = l.buf[i+1:]
	}
}

func (l *lineLogger) emit(line []byte) {
	line = bytes.TrimRight(line, "\r")
	if len(line) > 0 {
		l.log.Info("upstream stderr", "line", string(line))
	}
}
