package config

import (
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestHTTPTools(t *testing.T) {
	file := writeYAML(t, `
http_tools:
  - name: blog
    base_url: http://127.0.0.1:3000
    headers: { X-Api-Key: "${BLOG_KEY}" }
    timeout: 5s
    endpoints:
      - { name: list_posts, description: List blog posts, method: GET, path: /posts,
          query: { author: author name } }
      - { name: get_post, method: GET, path: '/posts/{id}' }
      - name: create_post
        method: POST
        path: /posts
        body: { title: { type: string } }
        required: [title]
        response: { select: "title" }
  - name: pets
    openapi: ./petstore.json
    base_url: http://127.0.0.1:4010
    exclude: ["tag:admin"]
`)
	c := mustLoad(t, []string{"--config", file}, map[string]string{"BLOG_KEY": "k3y"})
	if len(c.HTTPTools) != 2 || c.Source("http_tools") != SourceFile {
		t.Fatalf("http_tools = %+v from %q", c.HTTPTools, c.Source("http_tools"))
	}
	blog, pets := c.HTTPTools[0], c.HTTPTools[1]
	if blog.Headers["X-Api-Key"] != "k3y" || blog.Timeout != 5*time.Second || len(blog.Endpoints) != 3 ||
		blog.Endpoints[2].Response == nil || blog.Endpoints[2].Response.Select != "title" {
		t.Errorf("blog = %+v", blog)
	}
	if want := filepath.Join(filepath.Dir(file), "petstore.json"); pets.OpenAPI != want {
		t.Errorf("openapi = %q, want %q (beside the config file)", pets.OpenAPI, want)
	}
	if pets.Timeout != 30*time.Second || pets.MaxResponseBytes != 1<<20 {
		t.Errorf("pets defaults = %v, %d", pets.Timeout, pets.MaxResponseBytes)
	}
	described := c.String()
	if strings.Contains(described, "k3y") || !strings.Contains(described, "http_tools[0]=name=blog endpoints=3") {
		t.Errorf("Describe leaks the header or omits the source: %s", described)
	}
}

// A source with delegation exchange reads its client secret from the
// environment and never shows it.
func TestHTTPToolsDelegation(t *testing.T) {
	file := writeYAML(t, `
http_tools:
  - name: crm
    openapi: ./crm.json
    delegation: exchange
    exchange:
      token_endpoint: http://127.0.0.1:9000/oauth/token
      client_id: agents-mcp
      client_secret: ${CRM_EXCHANGE_SECRET}
      audience: https://crm.example
      scopes: [read]
  - name: mail
    openapi: ./mail.json
    delegation: Forward
`)
	c := mustLoad(t, []string{"--config", file}, map[string]string{"CRM_EXCHANGE_SECRET": "s3cr3t-x"})
	crm, mail := c.HTTPTools[0], c.HTTPTools[1]
	if crm.Delegation != "exchange" || crm.Exchange == nil || crm.Exchange.ClientSecret != "s3cr3t-x" ||
		crm.Exchange.Audience != "https://crm.example" || len(crm.Exchange.Scopes) != 1 {
		t.Errorf("crm = %+v, exchange %+v", crm, crm.Exchange)
	}
	if mail.Delegation != "forward" || mail.Exchange != nil {
		t.Errorf("mail = %+v", mail)
	}
	described := c.String()
	if strings.Contains(described, "s3cr3t-x") || !strings.Contains(described, "delegation=exchange") {
		t.Errorf("Describe leaks the client secret or omits the delegation: %s", described)
	}
}

func TestHTTPToolsErrors(t *testing.T) {
	for _, tt := range []struct{ name, yaml, want string }{
		{"unset variable", "http_tools:\n- {name: a, base_url: 'http://h', headers: {K: '${NOPE}'}, endpoints: [{name: x, method: GET, path: /x}]}\n",
			"http_tools[0].headers.K: environment variable NOPE is not set"},
		{"unknown key", "http_tools:\n- {name: a, base_url: 'http://h', endpoints: [{name: x, method: GET, path: /x, qeury: {}}]}\n",
			`unknown key "qeury" (in http_tools[].endpoints entry)`},
		{"bad path", "http_tools:\n- {name: a, base_url: 'http://h', endpoints: [{name: x, method: GET, path: 'x'}]}\n",
			"http_tools[0].endpoints[0].path: must begin with /"},
		{"upstream name", "upstreams:\n- {name: a, transport: stdio, command: x}\nhttp_tools:\n- {name: a, openapi: x.json}\n",
			`http_tools[0].name: "a" is already the name of an upstream`},
		{"twice", "http_tools:\n- {name: a, openapi: x.json}\n- {name: a, openapi: y.json}\n",
			`http_tools[1].name: "a" is already used by http_tools[0]`},
		{"metadata base_url", "http_tools:\n- {name: a, base_url: 'http://169.254.169.254/latest', endpoints: [{name: x, method: GET, path: /x}]}\n",
			"http_tools[0].base_url: http://169.254.169.254/latest: egress to 169.254.169.254 refused"},
		{"metadata openapi", "http_tools:\n- {name: a, openapi: 'http://metadata.google.internal/doc.json'}\n",
			"http_tools[0].openapi: http://metadata.google.internal/doc.json: egress to metadata.google.internal refused"},
		{"timeout", "http_tools:\n- {name: a, openapi: x.json, timeout: soon}\n",
			`http_tools[0].timeout: invalid duration "soon"`},
		{"delegation value", "http_tools:\n- {name: a, openapi: x.json, delegation: passthrough}\n",
			`http_tools[0].delegation: must be "forward" or "exchange"`},
		{"exchange missing", "http_tools:\n- {name: a, openapi: x.json, delegation: exchange}\n",
			`http_tools[0].exchange: is required with delegation: exchange`},
		{"exchange fields", "http_tools:\n- {name: a, openapi: x.json, delegation: exchange, exchange: {token_endpoint: /token}}\n",
			`http_tools[0].exchange.token_endpoint: must be an absolute http or https URL`},
		{"exchange secret unset", "http_tools:\n- {name: a, openapi: x.json, delegation: exchange, exchange: {token_endpoint: 'http://as/token', client_id: c, client_secret: '${NOPE}', audience: api}}\n",
			`http_tools[0].exchange.client_secret: environment variable NOPE is not set`},
		{"exchange without delegation", "http_tools:\n- {name: a, openapi: x.json, exchange: {client_id: c}}\n",
			`http_tools[0].exchange: applies only with delegation: exchange`},
		{"delegation and Authorization", "http_tools:\n- {name: a, openapi: x.json, delegation: forward, headers: {Authorization: x}}\n",
			`http_tools[0].headers.Authorization: cannot be set with delegation`},
		{"upstream delegation", "upstreams:\n- {name: a, transport: streamable, url: 'http://h/mcp', delegation: forward}\n",
			`upstreams[0].delegation: is not available for MCP upstreams: the MCP authorization specification forbids token passthrough`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load([]string{"--config", writeYAML(t, tt.yaml)}, envOf(nil), io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v\nwant it to contain %s", err, tt.want)
			}
		})
	}
}
