package remote

import (
	"bytes"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"slices"
	"sync"
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
// shutdown sequence of the MCP stdio transport).
func (p *process) transport() mcp.Transport {
	return &mcp.CommandTransport{Command: p.cmd, TerminateDuration: stopGrace}
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
