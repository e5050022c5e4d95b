package secrets_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/memory/secrets"
)

// storedConfigs returns the configs of upstream_definitions as stored,
// read with a connection of its own.
func storedConfigs(t *testing.T, path string) string {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT config FROM upstream_definitions")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var all strings.Builder
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		all.WriteString(s)
	}
	return all.String()
}

func headersOf(t *testing.T, d *agentsmcp.UpstreamDefinition) map[string]string {
	t.Helper()
	var cfg struct {
		Headers map[string]string `json:"headers"`
		URL     string            `json:"url"`
	}
	if err := json.Unmarshal(d.Config, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.URL != "http://127.0.0.1:9/mcp" {
		t.Errorf("the rest of the config changed: url %q", cfg.URL)
	}
	return cfg.Headers
}

// Header values of the upstreams and HTTP tool sources added at run time
// are sealed at rest and opened for the replicas; without a key they are
// refused rather than kept in clear; another key loses them; a value kept
// in clear by an older version still reads.
func TestUpstreamHeadersAreSealedAtRest(t *testing.T) {
	ctx := context.Background()
	db, path := open(t)
	sealer, err := secrets.New(newKey(t))
	if err != nil {
		t.Fatal(err)
	}
	defs := &secrets.UpstreamDefinitions{UpstreamService: db, Sealer: sealer}
	config := `{"transport":"streamable","url":"http://127.0.0.1:9/mcp","headers":{"X-Api-Key":"` + apiKey + `"}}`
	for _, kind := range []string{agentsmcp.UpstreamKindMCP, agentsmcp.UpstreamKindHTTP} {
		d := &agentsmcp.UpstreamDefinition{Name: "with-key-" + kind, Kind: kind, Config: json.RawMessage(config)}
		if err := defs.CreateUpstreamDefinition(ctx, d); err != nil {
			t.Fatal(err)
		}
		if d.Revision == "" || !strings.Contains(string(d.Config), apiKey) {
			t.Errorf("%s: the caller's definition lost its revision or its header: %+v", kind, d)
		}
		got, err := defs.ListUpstreamDefinitions(ctx, kind)
		if err != nil || len(got) != 1 {
			t.Fatalf("%s: list: %v %v", kind, got, err)
		}
		if h := headersOf(t, got[0]); h["X-Api-Key"] != apiKey {
			t.Errorf("%s: header read back as %q", kind, h["X-Api-Key"])
		}
	}
	stored := storedConfigs(t, path)
	leaks(t, "upstream_definitions", stored)
	if strings.Count(stored, "agents-mcp:sealed:v1:") != 2 {
		t.Errorf("the stored configs do not hold two sealed values: %s", stored)
	}

	// Another key cannot open them: the header is left out.
	other, err := secrets.New(newKey(t))
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	otherDefs := &secrets.UpstreamDefinitions{UpstreamService: db, Sealer: other, Logger: slog.New(slog.NewJSONHandler(&logs, nil))}
	for range 2 {
		got, err := otherDefs.ListUpstreamDefinitions(ctx, agentsmcp.UpstreamKindMCP)
		if err != nil || len(got) != 1 {
			t.Fatalf("list with another key: %v %v", got, err)
		}
		if h := headersOf(t, got[0]); len(h) != 0 {
			t.Errorf("another key read headers %v", h)
		}
	}
	if n := strings.Count(logs.String(), `"header":"X-Api-Key"`); n != 1 {
		t.Errorf("the unreadable header was logged %d times, want once: %s", n, logs.String())
	}
	leaks(t, "the log", logs.String())

	// Headers that are not an object of strings are refused, not stored
	// as they are.
	err = defs.CreateUpstreamDefinition(ctx, &agentsmcp.UpstreamDefinition{Name: "odd-headers",
		Config: json.RawMessage(`{"url":"http://127.0.0.1:9/mcp","headers":{"X-Api-Key":"` + apiKey + `","X-Count":1}}`)})
	if agentsmcp.ErrorCode(err) != agentsmcp.EINVALID {
		t.Errorf("headers that are not strings: %v", err)
	}
	leaks(t, "upstream_definitions", storedConfigs(t, path))

	// Without a key, headers are refused; a definition without headers is not.
	noKey := &secrets.UpstreamDefinitions{UpstreamService: db, Sealer: secrets.Redacting()}
	err = noKey.CreateUpstreamDefinition(ctx, &agentsmcp.UpstreamDefinition{Name: "no-key", Config: json.RawMessage(config)})
	if agentsmcp.ErrorCode(err) != agentsmcp.EINVALID || !strings.Contains(err.Error(), "secrets key") {
		t.Errorf("headers without a key: %v", err)
	}
	if err := noKey.CreateUpstreamDefinition(ctx, &agentsmcp.UpstreamDefinition{Name: "plain",
		Config: json.RawMessage(`{"transport":"streamable","url":"http://127.0.0.1:9/mcp"}`)}); err != nil {
		t.Errorf("a definition without headers and no key: %v", err)
	}
	leaks(t, "upstream_definitions", storedConfigs(t, path))

	// A value stored in clear before headers were sealed reads as it was.
	if err := db.CreateUpstreamDefinition(ctx, &agentsmcp.UpstreamDefinition{Name: "legacy",
		Config: json.RawMessage(`{"url":"http://127.0.0.1:9/mcp","headers":{"X-Old":"clear"}}`)}); err != nil {
		t.Fatal(err)
	}
	got, err := defs.ListUpstreamDefinitions(ctx, agentsmcp.UpstreamKindMCP)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range got {
		if d.Name == "legacy" && headersOf(t, d)["X-Old"] != "clear" {
			t.Errorf("a legacy clear header did not read: %s", d.Config)
		}
	}
}
