package config

import (
	"slices"
	"strings"
	"testing"
)

func TestEgressSettings(t *testing.T) {
	file := writeYAML(t, "egress:\n  allow: [169.254.170.2, ' metadata.google.internal ']\n  deny: ['10.0.0.0/8', '*.corp.example']\n")
	c := mustLoad(t, []string{"--config", file}, nil)
	if !slices.Equal(c.Egress.Allow, []string{"169.254.170.2", "metadata.google.internal"}) || c.Source("egress.allow") != SourceFile {
		t.Errorf("allow = %q from %s", c.Egress.Allow, c.Source("egress.allow"))
	}
	if !slices.Equal(c.Egress.Deny, []string{"10.0.0.0/8", "*.corp.example"}) || c.Source("egress.deny") != SourceFile {
		t.Errorf("deny = %q from %s", c.Egress.Deny, c.Source("egress.deny"))
	}
	c = mustLoad(t, []string{"--config", file}, map[string]string{"AGENTS_MCP_EGRESS_ALLOW": "fe80::/10, ", "AGENTS_MCP_EGRESS_DENY": "192.168.0.0/16"})
	if !slices.Equal(c.Egress.Allow, []string{"fe80::/10"}) || c.Source("egress.allow") != "env:AGENTS_MCP_EGRESS_ALLOW" {
		t.Errorf("allow = %q from %s", c.Egress.Allow, c.Source("egress.allow"))
	}
	if !slices.Equal(c.Egress.Deny, []string{"192.168.0.0/16"}) || c.Source("egress.deny") != "env:AGENTS_MCP_EGRESS_DENY" {
		t.Errorf("deny = %q from %s", c.Egress.Deny, c.Source("egress.deny"))
	}
	described := map[string]Setting{}
	for _, s := range c.Describe() {
		described[s.Name] = s
	}
	if s := described["egress.allow"]; s.Value != "fe80::/10" {
		t.Errorf("Describe egress.allow = %+v", s)
	}
}

func TestEgressRefusals(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		env  map[string]string
		want []string // every one must be in the error
	}{
		{
			name: "invalid entries",
			yaml: "egress: {allow: ['10.0.0.0/33'], deny: ['bad host!']}\n",
			env:  map[string]string{},
			want: []string{`egress.allow: allow[0]: "10.0.0.0/33" is not a CIDR`, `egress.deny: deny[0]: "bad host!" is not a host name`, "(from file)"},
		},
		{
			name: "invalid entry in the environment",
			env:  map[string]string{"AGENTS_MCP_EGRESS_DENY": "http://x.example/"},
			want: []string{"egress.deny: deny[0]", "(from env:AGENTS_MCP_EGRESS_DENY)"},
		},
		{
			name: "upstreams the policy refuses",
			yaml: `upstreams:
  - {name: meta, transport: streamable, url: "http://169.254.169.254/latest/meta-data/"}
  - {name: gcp, transport: sse, url: "http://metadata.google.internal/computeMetadata/v1/"}
  - {name: v6, transport: streamable, url: "http://[fe80::1]/mcp"}
  - {name: ok, transport: streamable, url: "http://10.0.0.1/mcp"}
`,
			want: []string{"upstreams[0].url: http://169.254.169.254/latest/meta-data/: egress to 169.254.169.254 refused",
				"upstreams[1].url", "upstreams[2].url"},
		},
		{
			name: "an upstream denied by the deny list",
			yaml: "egress: {deny: ['10.0.0.0/8']}\nupstreams:\n  - {name: ok, transport: streamable, url: 'http://10.0.0.1/mcp'}\n",
			want: []string{"upstreams[0].url", "deny list"},
		},
		{
			name: "CR/LF in an upstream header value, from the environment",
			yaml: "upstreams:\n  - {name: up, transport: streamable, url: 'http://127.0.0.1:9/mcp', headers: {X-Api-Key: '${UPSTREAM_KEY}'}}\n",
			env:  map[string]string{"UPSTREAM_KEY": "sekrit\r\nX-Injected: 1"},
			want: []string{"upstreams[0].headers: the value of X-Api-Key contains a control character"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var args []string
			if tt.yaml != "" {
				args = []string{"--config", writeYAML(t, tt.yaml)}
			}
			_, err := Load(args, envOf(tt.env))
			if err == nil {
				t.Fatal("loaded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if strings.Contains(err.Error(), "sekrit") || strings.Contains(err.Error(), "upstreams[3]") {
				t.Errorf("error quotes a secret or refuses an allowed upstream:\n%v", err)
			}
		})
	}
	// Allowed on purpose.
	c := mustLoad(t, []string{"--config", writeYAML(t, "egress: {allow: [169.254.170.2]}\nupstreams:\n  - {name: ecs, transport: streamable, url: 'http://169.254.170.2/mcp'}\n")}, nil)
	if len(c.Upstreams) != 1 {
		t.Errorf("upstreams %v", c.Upstreams)
	}
}
