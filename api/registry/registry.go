// Package registry serves the read routes of the MCP Registry API v0.1
// (GET /v0.1/servers, /v0.1/servers/{serverName}/versions and
// /v0.1/servers/{serverName}/versions/{version|latest}) over the virtual
// servers, in the server.json shape of 2025-12-11, and a Server Card per
// virtual server at /.well-known/mcp-server-card/{name}, following the
// draft Server Cards SEP (SEP-2127), whose shape may still change.
//
// It is read-only. cmd mounts it behind the MCP endpoints' credential
// check and the server's Host/Origin check; a caller sees only the virtual
// servers its credential may use.
package registry

import (
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
)

// Paths served.
const (
	ServersPath     = "/v0.1/servers"
	ServerCardsPath = "/.well-known/mcp-server-card/"
)

// ServerSchema is the server.json schema the entries follow.
const ServerSchema = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"

// MetaKey is the _meta key of what agents-mcp adds to an entry.
const MetaKey = "io.github.agents-mcp/virtual-server"

// Options configure a [Handler].
type Options struct {
	// Servers lists the virtual servers published.
	Servers agentsmcp.VirtualServerLister
	// Tools, if set, gives the tools a virtual server exposes now, for its
	// Server Card.
	Tools func(name string) []*mcp.Tool
	// PublicURL is the server's public base URL (public_url); "" takes
	// http://<Host of the request>.
	PublicURL string
}

// Handler serves the registry routes and the Server Cards.
type Handler struct {
	opts Options
	mux  *http.ServeMux
}

// New returns the handler of opts.
func New(opts Options) *Handler {
	h := &Handler{opts: opts, mux: http.NewServeMux()}
	h.mux.HandleFunc("GET "+ServersPath, h.list)
	h.mux.HandleFunc("GET "+ServersPath+"/{serverName}/versions", h.versions)
	h.mux.HandleFunc("GET "+ServersPath+"/{serverName}/versions/{version}", h.version)
	h.mux.HandleFunc("GET "+ServerCardsPath+"{name}", h.card)
	return h
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// ServerDetail is a server.json document (2025-12-11): the fields this
// server fills.
type ServerDetail struct {
	Schema      string         `json:"$schema"`
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Title       string         `json:"title,omitempty"`
	Version     string         `json:"version"`
	Remotes     []Remote       `json:"remotes"`
	Meta        map[string]any `json:"_meta,omitempty"`
	Tools       []CardTool     `json:"tools,omitempty"` // Server Cards only
}

// Remote is a server.json remote transport.
type Remote struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

// CardTool is a tool as a Server Card lists it.
type CardTool struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	InputSchema any    `json:"inputSchema,omitempty"`
}

// ServerResponse is one entry of the registry API.
type ServerResponse struct {
	Server ServerDetail   `json:"server"`
	Meta   map[string]any `json:"_meta,omitempty"`
}

// ServerList is the body of the list routes.
type ServerList struct {
	Servers  []ServerResponse `json:"servers"`
	Metadata ListMetadata     `json:"metadata"`
}

// ListMetadata pages a ServerList.
type ListMetadata struct {
	NextCursor string `json:"nextCursor,omitempty"`
	Count      int    `json:"count"`
}

// visible returns the virtual servers the caller may use, by name.
func (h *Handler) visible(r *http.Request) []*agentsmcp.VirtualServer {
	var p *agentsmcp.Principal
	if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
		p, _ = ti.Extra[agentsmcp.TokenInfoPrincipal].(*agentsmcp.Principal)
	}
	all := h.opts.Servers.VirtualServers()
	return slices.DeleteFunc(slices.Clone(all), func(vs *agentsmcp.VirtualServer) bool { return !p.MayUseVirtualServer(vs.Name) })
}

// namespace is the reverse-DNS namespace of the published names: the
// public host, reversed ("agents.example.com" → "com.example.agents").
func (h *Handler) namespace(r *http.Request) string {
	host := r.Host
	if h.opts.PublicURL != "" {
		if u, err := url.Parse(h.opts.PublicURL); err == nil {
			host = u.Host
		}
	}
	if hn, _, err := net.SplitHostPort(host); err == nil {
		host = hn
	}
	host = strings.Trim(strings.ToLower(host), "[]")
	host = strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-' {
			return c
		}
		return '-'
	}, host)
	parts := strings.Split(host, ".")
	slices.Reverse(parts)
	if ns := strings.Join(parts, "."); ns != "" {
		return ns
	}
	return "local"
}

func (h *Handler) baseURL(r *http.Request) string {
	if h.opts.PublicURL != "" {
		return strings.TrimRight(h.opts.PublicURL, "/")
	}
	return "http://" + r.Host
}

// detail is vs as a server.json document.
func (h *Handler) detail(r *http.Request, vs *agentsmcp.VirtualServer) ServerDetail {
	base := h.baseURL(r)
	desc := vs.Description
	if desc == "" {
		desc = "agents-mcp virtual server " + vs.Name
	}
	meta := map[string]any{"catalogMode": vs.CatalogMode}
	if !vs.CreatedAt.IsZero() {
		meta["createdAt"] = vs.CreatedAt.UTC().Format(time.RFC3339)
	}
	return ServerDetail{
		Schema:      ServerSchema,
		Name:        h.namespace(r) + "/" + vs.Name,
		Description: storedform.TruncateUTF8(desc, 100),
		Title:       storedform.TruncateUTF8(vs.Title, 100),
		Version:     publishedVersion(vs),
		Remotes: []Remote{
			{Type: "streamable-http", URL: base + "/mcp/" + url.PathEscape(vs.Name)},
			{Type: "sse", URL: base + "/sse/" + url.PathEscape(vs.Name)},
		},
		Meta: map[string]any{MetaKey: meta},
	}
}

func (h *Handler) response(r *http.Request, vs *agentsmcp.VirtualServer) ServerResponse {
	return ServerResponse{Server: h.detail(r, vs), Meta: map[string]any{MetaKey: map[string]any{"isLatest": true}}}
}

// GET /v0.1/servers: cursor (a server name: the list starts after it),
// limit (default and maximum 100), search (substring of the name),
// version (latest or exact).
func (h *Handler) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := 100
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			writeError(w, http.StatusBadRequest, "limit must be a positive integer")
			return
		}
		limit = min(n, 100)
	}
	cursor, search, version := q.Get("cursor"), q.Get("search"), q.Get("version")
	var out []ServerResponse
	next := ""
	for _, vs := range h.visible(r) {
		resp := h.response(r, vs)
		if cursor != "" && resp.Server.Name <= cursor {
			continue
		}
		if search != "" && !strings.Contains(resp.Server.Name, search) {
			continue
		}
		if version != "" && version != "latest" && version != resp.Server.Version {
			continue
		}
		if len(out) == limit {
			next = out[len(out)-1].Server.Name
			break
		}
		out = append(out, resp)
	}
	if out == nil {
		out = []ServerResponse{}
	}
	writeJSON(w, http.StatusOK, ServerList{Servers: out, Metadata: ListMetadata{NextCursor: next, Count: len(out)}})
}

// find returns the visible virtual server published as name.
func (h *Handler) find(r *http.Request, name string) (*agentsmcp.VirtualServer, bool) {
	ns, short, ok := strings.Cut(name, "/")
	if !ok || ns != h.namespace(r) {
		return nil, false
	}
	for _, vs := range h.visible(r) {
		if vs.Name == short {
			return vs, true
		}
	}
	return nil, false
}

// GET /v0.1/servers/{serverName}/versions: the one version served.
func (h *Handler) versions(w http.ResponseWriter, r *http.Request) {
	vs, ok := h.find(r, r.PathValue("serverName"))
	if !ok {
		writeError(w, http.StatusNotFound, "Server not found")
		return
	}
	writeJSON(w, http.StatusOK, ServerList{Servers: []ServerResponse{h.response(r, vs)}, Metadata: ListMetadata{Count: 1}})
}

// GET /v0.1/servers/{serverName}/versions/{version}: latest or the one
// version served.
func (h *Handler) version(w http.ResponseWriter, r *http.Request) {
	vs, ok := h.find(r, r.PathValue("serverName"))
	if v := r.PathValue("version"); ok && v != "latest" && v != publishedVersion(vs) {
		ok = false
	}
	if !ok {
		writeError(w, http.StatusNotFound, "Server not found")
		return
	}
	writeJSON(w, http.StatusOK, h.response(r, vs))
}

// CardSchema is the schema a Server Card names: the draft's.
const CardSchema = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"

// GET /.well-known/mcp-server-card/{name}: the virtual server's card (the
// draft SEP-2127 shape: server.json's fields and the tools it exposes).
func (h *Handler) card(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	var found *agentsmcp.VirtualServer
	for _, vs := range h.visible(r) {
		if vs.Name == name {
			found = vs
		}
	}
	if found == nil {
		writeError(w, http.StatusNotFound, "Server not found")
		return
	}
	card := h.detail(r, found)
	card.Schema = CardSchema
	if h.opts.Tools != nil {
		for _, t := range h.opts.Tools(name) {
			card.Tools = append(card.Tools, CardTool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema})
		}
	}
	card.Meta[MetaKey].(map[string]any)["draft"] = "SEP-2127 (MCP Server Cards), a draft: this shape may change"
	writeJSON(w, http.StatusOK, card)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// publishedVersion is vs's Version, or [agentsmcp.DefaultVirtualServerVersion].
func publishedVersion(vs *agentsmcp.VirtualServer) string {
	if vs.Version == "" {
		return agentsmcp.DefaultVirtualServerVersion
	}
	return vs.Version
}
