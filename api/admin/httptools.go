package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/httptools"
)

// This file serves the HTTP tool sources (the http_tools section, ADR 0011).

// HTTPTools manages the HTTP tool sources at run time;
// httptools.SharedSources implements it for every replica.
type HTTPTools interface {
	// Add loads a source, keeps it and serves its tools. EINVALID for a
	// bad source or one that serves no tool, ECONFLICT for a name in use.
	Add(ctx context.Context, src httptools.Source) error
	// Remove removes a source added through Add. ENOTFOUND if there is
	// none, ECONFLICT for a source of the config file.
	Remove(ctx context.Context, name string) error
	// Statuses reports every source (of the config file too), by name,
	// without header values.
	Statuses() []httptools.Status
}

// scrubHTTPToolsBody removes header values from a POST /http-tools body,
// and an inline document, before it is redacted for the audit trail: any
// header may carry a credential, whatever its name, and a document of a
// few MiB has no place in an audit entry (its size is kept).
func scrubHTTPToolsBody(body json.RawMessage) json.RawMessage {
	return scrubHeaders(body, func(m map[string]json.RawMessage) {
		if doc, ok := m["openapi_document"]; ok {
			m["openapi_document"], _ = json.Marshal(fmt.Sprintf("[inline, %d bytes]", len(doc)))
		}
	})
}

// GET /http-tools: every source's status, sorted by name.
func (h *Handler) listHTTPTools(w http.ResponseWriter, r *http.Request) error {
	if h.opts.HTTPTools == nil {
		return unavailable("http_tools management")
	}
	return writeOffsetPage(w, r, h.opts.HTTPTools.Statuses)
}

// POST /http-tools: 201 with the new source's status once it is loaded
// (its document fetched and parsed) and stored.
func (h *Handler) addHTTPTools(w http.ResponseWriter, r *http.Request) error {
	if h.opts.HTTPTools == nil {
		return unavailable("http_tools management")
	}
	if _, err := queryParams(r); err != nil {
		return err
	}
	var spec httptools.Spec
	if err := decodeBody(r, &spec); err != nil {
		return err
	}
	src, err := spec.Source()
	if err != nil {
		return err
	}
	ctx, cancel := h.requestContext(r)
	defer cancel()
	if err := h.opts.HTTPTools.Add(ctx, src); err != nil {
		return err
	}
	h.opts.Logger.Info("http_tools source added through the admin API", "source", src.Name, "principal", agentsmcp.PrincipalIDFrom(r.Context()))
	st, ok := h.httpToolsStatus(src.Name)
	if !ok {
		return agentsmcp.Errorf(agentsmcp.ECONFLICT, "http_tools %q was removed while it was being added", src.Name)
	}
	w.Header().Set("Location", Prefix+"/http-tools/"+src.Name)
	writeJSON(w, http.StatusCreated, st)
	return nil
}

func (h *Handler) httpToolsStatus(name string) (httptools.Status, bool) {
	for _, st := range h.opts.HTTPTools.Statuses() {
		if st.Name == name {
			return st, true
		}
	}
	return httptools.Status{}, false
}

// namedHTTPTools checks what every /http-tools/{name} request shares, as
// namedUpstream does, and returns the name.
func (h *Handler) namedHTTPTools(r *http.Request) (string, error) {
	if h.opts.HTTPTools == nil {
		return "", unavailable("http_tools management")
	}
	return routeName(r, httptools.NamePattern, "http_tools source")
}

// GET /http-tools/{name}: one source's status.
func (h *Handler) getHTTPTools(w http.ResponseWriter, r *http.Request) error {
	name, err := h.namedHTTPTools(r)
	if err != nil {
		return err
	}
	st, ok := h.httpToolsStatus(name)
	if !ok {
		return notFoundf("no http_tools source named %q", name)
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

// DELETE /http-tools/{name}: 204 once its tools are gone here (the other
// replicas follow through the store).
func (h *Handler) removeHTTPTools(w http.ResponseWriter, r *http.Request) error {
	name, err := h.namedHTTPTools(r)
	if err != nil {
		return err
	}
	ctx, cancel := h.requestContext(r)
	defer cancel()
	if err := h.opts.HTTPTools.Remove(ctx, name); err != nil {
		return err
	}
	h.opts.Logger.Info("http_tools source removed through the admin API", "source", name, "principal", agentsmcp.PrincipalIDFrom(r.Context()))
	w.WriteHeader(http.StatusNoContent)
	return nil
}
