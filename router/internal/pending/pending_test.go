package pending

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func TestCallsWaitsForAnswers(t *testing.T) {
	var c Calls
	id1, _ := jsonrpc.MakeID(float64(1))
	id2, _ := jsonrpc.MakeID("two")
	c.Received(&jsonrpc.Request{ID: id1, Method: "tools/call"})
	c.Received(&jsonrpc.Request{ID: id2, Method: "ping"})
	c.Received(&jsonrpc.Request{Method: "notifications/progress"}) // not a call
	c.Sent(&jsonrpc.Response{ID: id1})

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if left := c.Wait(ctx); left != 1 {
		t.Fatalf("Wait = %d, want 1 unanswered", left)
	}
	go func() {
		time.Sleep(10 * time.Millisecond)
		c.Sent(&jsonrpc.Response{ID: id2})
	}()
	if left := c.Wait(context.Background()); left != 0 {
		t.Fatalf("Wait = %d after the last answer", left)
	}
}

func TestCounter(t *testing.T) {
	var c Counter
	if c.Wait(context.Background()) != 0 {
		t.Fatal("empty counter is not idle")
	}
	done := c.Add()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if c.Wait(ctx) != 1 {
		t.Fatal("Wait returned early")
	}
	go func() { time.Sleep(5 * time.Millisecond); done(); done() }()
	if c.Wait(context.Background()) != 0 {
		t.Fatal("not idle after done")
	}
	if c.Add(); c.n != 1 {
		t.Fatalf("double done corrupted the count: %d", c.n)
	}
}
