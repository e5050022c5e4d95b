package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/redact"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
	"github.com/agents-mcp/agents-mcp/internal/validate"
)

// This file serves the upstream MCP servers.

// UpstreamInput is the body of POST /upstreams: the config-file entry of
// an upstream, in the API's camelCase, for the streamable and sse
// transports only. Durations are Go durations ("30s", "1m30s"); zero or
// absent limits take the pool's defaults. Header values are secrets: they
// are never returned nor audited, and used as given (no ${VAR}
// expansion).
type UpstreamInput struct {
	Name      string            `json:"name"`
	Transport string            `json:"transport"`
	URL       string            `json:"url"`
	Headers   map[string]string `json:"headers,omitempty"`
	// Auth "oauth": tokens from the credential store, per caller (ADR
	// 0012); streamable only.
	Auth            string           `json:"auth,omitempty"`
	Tools           *ToolFilterInput `json:"tools,omitempty"`
	Timeout         string           `json:"timeout,omitempty"`
	ProtocolVersion string           `json:"protocolVersion,omitempty"`
	MaxConcurrency  int              `json:"maxConcurrency,omitempty"`
	MaxBackoff      string           `json:"maxBackoff,omitempty"`

	// The stdio fields are decoded only to be refused with the reason,
	// rather than as unknown fields.
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
}

// ToolFilterInput selects the upstream tools exposed, by the upstream's
// own names: an empty Allow allows every tool, Deny wins over Allow.
type ToolFilterInput struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// UpstreamDetail is an upstream's health with the tools it exposes now,
// under their client-visible names, and its last state transitions as the
// replica that answers saw them (see [agentsmcp.UpstreamManager.History]).
type UpstreamDetail struct {
	agentsmcp.UpstreamStatus
	ExposedTools []*mcp.Tool                    `json:"exposedTools"`
	History      []agentsmcp.UpstreamTransition `json:"history"`
}

var upstreamNameRE = regexp.MustCompile(agentsmcp.UpstreamNamePattern)

// errStdio explains why the API refuses stdio upstreams.
var errStdio = invalidf("stdio upstreams cannot be added through the admin API: a stdio upstream runs a command on the server, " +
	"and taking one from the network would be remote code execution; define it in the config file, " +
	"or use transport streamable or sse with an http(s) URL")

// config checks in and turns it into a pool config with defaults.
func (in *UpstreamInput) config() (agentsmcp.UpstreamConfig, error) {
	if strings.EqualFold(strings.TrimSpace(in.Transport), agentsmcp.UpstreamStdio) || in.Command != "" || len(in.Args) > 0 || len(in.Env) > 0 {
		return agentsmcp.UpstreamConfig{}, errStdio
	}
	cfg := agentsmcp.UpstreamConfig{
		Name: in.Name, Transport: in.Transport, URL: in.URL, Headers: in.Headers, Auth: in.Auth,
		ProtocolVersion: in.ProtocolVersion, MaxConcurrency: in.MaxConcurrency,
	}
	switch cfg.Transport {
	case agentsmcp.UpstreamStreamable, agentsmcp.UpstreamSSE:
	case "":
		return agentsmcp.UpstreamConfig{}, invalidf("transport is required: streamable or sse")
	default:
		return agentsmcp.UpstreamConfig{}, invalidf("transport %q is not one of streamable, sse", storedform.TruncateUTF8(cfg.Transport, 64))
	}
	if u, err := url.Parse(in.URL); err == nil && u.Scheme != "" && u.Scheme != "http" && u.Scheme != "https" {
		return agentsmcp.UpstreamConfig{}, invalidf("url: the scheme must be http or https, not %q", storedform.TruncateUTF8(u.Scheme, 32))
	}
	if in.Tools != nil {
		cfg.Tools = agentsmcp.UpstreamToolFilter{Allow: in.Tools.Allow, Deny: in.Tools.Deny}
	}
	for _, d := range []struct {
		field, value string
		into         *time.Duration
	}{{"timeout", in.Timeout, &cfg.Timeout}, {"maxBackoff", in.MaxBackoff, &cfg.MaxBackoff}} {
		if d.value == "" {
			continue
		}
		v, err := time.ParseDuration(d.value)
		if err != nil || v <= 0 {
			return agentsmcp.UpstreamConfig{}, invalidf("%s %q is not a positive duration such as 30s", d.field, storedform.TruncateUTF8(d.value, 64))
		}
		*d.into = v
	}
	if cfg.MaxConcurrency < 0 {
		return agentsmcp.UpstreamConfig{}, invalidf("maxConcurrency must be positive, got %d", cfg.MaxConcurrency)
	}
	cfg = cfg.WithDefaults()
	if problems := validate.UpstreamConfigProblems(&cfg); len(problems) > 0 {
		msgs := make([]string, len(problems))
		for i, p := range problems {
			msgs[i] = apiFieldName(p.Field) + ": " + p.Message
		}
		return agentsmcp.UpstreamConfig{}, invalidf("upstream %q: %s", storedform.TruncateUTF8(cfg.Name, 64), strings.Join(msgs, "; "))
	}
	return cfg, nil
}

// apiFieldName turns the config file's field names in pool problems into
// this API's.
func apiFieldName(f string) string {
	for file, api := range map[string]string{"protocol_version": "protocolVersion", "max_concurrency": "maxConcurrency", "max_backoff": "maxBackoff"} {
		if strings.HasPrefix(f, file) {
			return api + strings.TrimPrefix(f, file)
		}
	}
	return f
}

// scrubUpstreamBody removes header values (and a stdio env, refused but
// still not recorded) from a POST /upstreams body before it is redacted
// for the audit trail.
func scrubUpstreamBody(body json.RawMessage) json.RawMessage {
	return scrubHeaders(body, func(m map[string]json.RawMessage) {
		if _, ok := m["env"]; ok {
			m["env"] = json.RawMessage(`"` + redact.Marker + `"`)
		}
	})
}

// scrubHeaders is body, a JSON object, with the values of its "headers"
// object redacted, and then whatever more changes: any header may carry a
// credential, whatever its name. A body that is not an object is
// returned as it is: redact.Arguments records only its size.
func scrubHeaders(body json.RawMessage, more func(m map[string]json.RawMessage)) json.RawMessage {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return body
	}
	var headers map[string]json.RawMessage
	if err := json.Unmarshal(m["headers"], &headers); err == nil && headers != nil {
		for k := range headers {
			headers[k] = json.RawMessage(`"` + redact.Marker + `"`)
		}
		m["headers"], _ = json.Marshal(headers)
	} else if _, ok := m["headers"]; ok {
		m["headers"] = json.RawMessage(`"` + redact.Marker + `"`)
	}
	more(m)
	out, err := json.Marshal(m)
	if err != nil {
		return body
	}
	return out
}

// GET /upstreams: every upstream's status, sorted by name.
func (h *Handler) listUpstreams(w http.ResponseWriter, r *http.Request) error {
	if h.opts.Upstreams == nil {
		return unavailable("upstream management")
	}
	return writeOffsetPage(w, r, h.opts.Upstreams.Statuses)
}

// writeOffsetPage answers a GET of a list held in memory (the upstreams'
// or HTTP tool sources' statuses, the operations), paged by offset
// (limit, cursor).
func writeOffsetPage[T any](w http.ResponseWriter, r *http.Request, list func() []T) error {
	p, err := queryParams(r, "limit", "cursor")
	if err != nil {
		return err
	}
	pg, err := offsetPageOf(p)
	if err != nil {
		return err
	}
	all := list()
	from, to, next := pg.cutOffset(len(all))
	writeJSON(w, http.StatusOK, newPage(all[from:to], next, ""))
	return nil
}

// POST /upstreams: 201 with the new upstream's status once its first
// connect attempt ended (or RequestTimeout passed; it keeps connecting).
func (h *Handler) addUpstream(w http.ResponseWriter, r *http.Request) error {
	if h.opts.Upstreams == nil {
		return unavailable("upstream management")
	}
	if _, err := queryParams(r); err != nil {
		return err
	}
	var in UpstreamInput
	if err := decodeBody(r, &in); err != nil {
		return err
	}
	cfg, err := in.config()
	if err != nil {
		return err
	}
	ctx, cancel := h.requestContext(r)
	defer cancel()
	if err := h.opts.Upstreams.Add(ctx, cfg); err != nil {
		return err
	}
	h.opts.Logger.Info("upstream added through the admin API", "upstream", cfg, "principal", agentsmcp.PrincipalIDFrom(r.Context()))
	st, ok := h.opts.Upstreams.Status(cfg.Name)
	if !ok {
		return agentsmcp.Errorf(agentsmcp.ECONFLICT, "upstream %q was removed while it was being added", cfg.Name)
	}
	w.Header().Set("Location", Prefix+"/upstreams/"+cfg.Name)
	writeJSON(w, http.StatusCreated, st)
	return nil
}

// namedUpstream checks what every /upstreams/{name} request shares, in
// this order: upstream management is available, there are no query
// parameters, a write carries no body (or an empty JSON object), and the
// name is well formed; it returns the name.
func (h *Handler) namedUpstream(r *http.Request) (string, error) {
	if h.opts.Upstreams == nil {
		return "", unavailable("upstream management")
	}
	return routeName(r, upstreamNameRE, "upstream")
}

// routeName is the {name} of a route about one upstream or HTTP tool
// source (what): no query parameters, no body but on GET, and a name that
// does not match pattern is answered 404 like any unknown one.
func routeName(r *http.Request, pattern *regexp.Regexp, what string) (string, error) {
	if _, err := queryParams(r); err != nil {
		return "", err
	}
	if r.Method != http.MethodGet {
		if err := noBody(r); err != nil {
			return "", err
		}
	}
	name := chi.URLParam(r, "name")
	if !pattern.MatchString(name) {
		return "", notFoundf("no %s named %q", what, storedform.TruncateUTF8(name, 64))
	}
	return name, nil
}

// GET /upstreams/{name}: health, exposed tools and state history.
func (h *Handler) getUpstream(w http.ResponseWriter, r *http.Request) error {
	name, err := h.namedUpstream(r)
	if err != nil {
		return err
	}
	ctx, cancel := h.requestContext(r)
	defer cancel()
	tools, err := h.opts.Upstreams.Tools(ctx, name)
	if err != nil {
		return err
	}
	st, ok := h.opts.Upstreams.Status(name)
	history, okHistory := h.opts.Upstreams.History(name)
	if !ok || !okHistory {
		return notFoundf("no upstream named %q", name)
	}
	if tools == nil {
		tools = []*mcp.Tool{}
	}
	writeJSON(w, http.StatusOK, UpstreamDetail{UpstreamStatus: st, ExposedTools: tools, History: history})
	return nil
}

// DELETE /upstreams/{name}: 204 once its session is closed here (the
// other replicas follow through the store).
func (h *Handler) removeUpstream(w http.ResponseWriter, r *http.Request) error {
	name, err := h.namedUpstream(r)
	if err != nil {
		return err
	}
	ctx, cancel := h.requestContext(r)
	defer cancel()
	if err := h.opts.Upstreams.Remove(ctx, name); err != nil {
		return err
	}
	h.opts.Logger.Info("upstream removed through the admin API", "upstream", name, "principal", agentsmcp.PrincipalIDFrom(r.Context()))
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// POST /upstreams/{name}/refresh: 202 with the refresh operation. A
// refresh of the same upstream already running is answered with that
// operation.
func (h *Handler) refreshUpstream(w http.ResponseWriter, r *http.Request) error {
	name, err := h.namedUpstream(r)
	if err != nil {
		return err
	}
	if _, ok := h.opts.Upstreams.Status(name); !ok {
		return notFoundf("no upstream named %q", name)
	}
	ups := h.opts.Upstreams
	op, err := h.ops.start(OperationRefresh, name, h.opts.RefreshTimeout, func(ctx context.Context, report func(Progress, string)) (any, error) {
		report(Progress{Stage: "refresh", Total: 1}, "re-listing the tools, resources and prompts of "+name)
		st, err := ups.Refresh(ctx, name)
		if err != nil {
			return nil, err
		}
		if ctx.Err() != nil {
			return st, ctx.Err()
		}
		report(Progress{Stage: "refresh", Done: 1, Total: 1}, fmt.Sprintf("%s: %s, %d tools", name, st.State, st.Tools))
		if st.State == agentsmcp.UpstreamDown {
			return st, agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "upstream %s is down: %s", name, st.Reason)
		}
		return st, nil
	})
	if err != nil {
		return err
	}
	acceptOperation(w, op)
	return nil
}
