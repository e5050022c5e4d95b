package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestStdioIsQuietByDefault: stdio clients show the server's stderr to the
// user, so `agents-mcp stdio` logs nothing below a warning unless a layer
// asks for more; --log-level info brings the start-up lines back.
func TestStdioIsQuietByDefault(t *testing.T) {
	run := func(t *testing.T, env []string, args ...string) string {
		t.Helper()
		cmd := exec.Command(os.Args[0], append([]string{"-test.run=^$", "--", "stdio", "--data-dir", t.TempDir()}, args...)...)
		cmd.Env = append(os.Environ(), append(env, childEnv+"=1", "AGENTS_MCP_LLM=builtin")...)
		// An initialize, then end of input: the session starts and ends.
		cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"quiet","version":"1"}}}` + "\n")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("stdio: %v\n%s", err, stderr.String())
			}
		case <-time.After(60 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Fatalf("stdio did not exit at the end of its input\n%s", stderr.String())
		}
		if !strings.Contains(stdout.String(), `"protocolVersion"`) {
			t.Fatalf("no initialize answer on stdout: %q\nstderr:\n%s", stdout.String(), stderr.String())
		}
		return stderr.String()
	}
	t.Run("default", func(t *testing.T) {
		// Every line on stderr is a warning or an error.
		logs := run(t, nil)
		lines := strings.Split(strings.TrimSpace(logs), "\n")
		quiet := 0
		for _, line := range lines {
			if line == "" || strings.Contains(line, `"level":"WARN"`) || strings.Contains(line, `"level":"ERROR"`) {
				quiet++
			}
		}
		if quiet != len(lines) {
			t.Errorf("stdio wrote %d lines to stderr by default, %d of them below a warning:\n%s", len(lines), len(lines)-quiet, logs)
		}
	})
	t.Run("flag", func(t *testing.T) {
		if logs := run(t, nil, "--log-level", "info"); !strings.Contains(logs, `"msg":"setting"`) {
			t.Errorf("--log-level info: no setting lines on stderr:\n%s", logs)
		}
	})
	t.Run("env", func(t *testing.T) {
		if logs := run(t, []string{"AGENTS_MCP_LOG_LEVEL=info"}); !strings.Contains(logs, `"msg":"setting"`) {
			t.Errorf("AGENTS_MCP_LOG_LEVEL=info: no setting lines on stderr:\n%s", logs)
		}
	})
}
