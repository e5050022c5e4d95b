// Package netnstest runs a test inside a network namespace that has only
// loopback, so that a test of refused outbound connections cannot send a
// packet off the machine even when the code under test is wrong: in there,
// 169.254.169.254 is unreachable at once.
package netnstest

import (
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// insideEnv marks the re-run of a test inside the namespace.
const insideEnv = "AGENTS_MCP_TEST_IN_NETNS"

// Isolate makes the calling top-level test run in a network namespace with
// only loopback. Outside one, it re-runs the test binary for this test alone
// under `unshare -n` (root only; otherwise the test is skipped, saying why),
// fails t if the re-run fails, and returns false: the caller returns at
// once. Inside (the re-run), it checks that no interface but loopback is up
// and returns true: the caller goes on with the test.
//
//	if !netnstest.Isolate(t) {
//		return
//	}
func Isolate(t *testing.T) bool {
	t.Helper()
	if os.Getenv(insideEnv) == "1" {
		ifaces, err := net.Interfaces()
		if err != nil {
			t.Fatalf("list interfaces: %v", err)
		}
		for _, i := range ifaces {
			if i.Flags&net.FlagUp != 0 && i.Flags&net.FlagLoopback == 0 {
				t.Fatalf("interface %s is up inside the test's network namespace", i.Name)
			}
		}
		return true
	}
	if strings.Contains(t.Name(), "/") {
		t.Fatalf("netnstest.Isolate is for top-level tests, not %s", t.Name())
	}
	if os.Geteuid() != 0 {
		t.Skip("skipped: this test would connect to a non-loopback address if the code under test were wrong, " +
			"so it runs only in a network namespace with only loopback (unshare -n), which needs root")
	}
	for _, tool := range []string{"unshare", "ip", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipped: %s is not installed; it is needed to run this test in a network namespace with only loopback", tool)
		}
	}
	cmd := exec.Command("unshare", "-n", "bash", "-c", `ip link set lo up && exec "$@"`, "bash",
		os.Args[0], "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), insideEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s in a network namespace with only loopback: %v\n%s", t.Name(), err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("%s did not pass in the network namespace:\n%s", t.Name(), out)
	}
	t.Logf("passed in a network namespace with only loopback:\n%s", out)
	return false
}
