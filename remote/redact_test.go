package remote

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A token in the upstream URL's query must not reach callers, Status or the
// log through error messages (Go's HTTP errors quote the URL).
func TestUpstreamURLSecretsStayOutOfErrors(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t-query-token"
	e := newEnv(t, fastOptions())
	fx := newFixture("q")
	t.Cleanup(fx.releaseAll)
	hs := serveStreamable(t, fx.server)
	cfg := streamableConfig("q", hs.URL()+"?token="+secret)
	e.add(cfg)
	cs := e.caller(nil, callerVersion)
	if got := mustText(t, cs, "q__echo", `{"text":"hi"}`); !strings.Contains(got, "hi") {
		t.Fatalf("echo = %q", got)
	}

	hs.stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := call(ctx, cs, "q__echo", `{"text":"again"}`)
	msg := resultText(res)
	if err != nil {
		msg = err.Error()
	} else if !res.IsError {
		t.Fatalf("a call to a stopped upstream succeeded: %q", msg)
	}
	st := e.waitState("q", StateDown, 10*time.Second)
	for what, text := range map[string]string{"call error": msg, "status reason": st.Reason, "status last error": st.LastError, "status url": st.URL, "log": e.logs.String()} {
		if strings.Contains(text, secret) {
			t.Errorf("%s contains the URL's token: %q", what, text)
		}
	}
	if !strings.Contains(st.LastError, "127.0.0.1") {
		t.Errorf("last error %q should still say where the upstream is", st.LastError)
	}
}
