package admin

import (
	"context"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// This file serves the virtual servers ([agentsmcp.VirtualServer]): those
// of the config file are read-only here; those added through the API are
// kept in the store, which every replica follows.

// VirtualServers is what the API needs of the server's virtual servers:
// the router, through cmd.
type VirtualServers interface {
	// VirtualServers lists those served now, config file and store.
	VirtualServers() []*agentsmcp.VirtualServer
	// IsConfigVirtualServer reports whether the config file defines name.
	IsConfigVirtualServer(name string) bool
	// VirtualServerTools returns the tools the server name exposes now,
	// under its names, and the selected tools it could not expose (each
	// with why); false when there is no such server.
	VirtualServerTools(name string) (tools []*mcp.Tool, dropped []string, ok bool)
	// SyncVirtualServers makes this replica serve store's definitions now,
	// rather than at its next sync.
	SyncVirtualServers(ctx context.Context, store agentsmcp.VirtualServerService) error
}

// VirtualServerView is a virtual server as GET returns it: its definition,
// where it is defined ("config" or "store"), and, for one server, what it
// exposes now.
type VirtualServerView struct {
	*agentsmcp.VirtualServer
	Source       string      `json:"source"`
	ExposedTools []*mcp.Tool `json:"exposedTools,omitempty"`
	// Dropped lists the selected tools the server cannot expose (a name
	// taken by another), each with why.
	Dropped []string `json:"dropped,omitempty"`
}

const (
	virtualSourceConfig = "config"
	virtualSourceStore  = "store"
)

func (h *Handler) virtualSource(name string) string {
	if h.opts.VirtualServers.IsConfigVirtualServer(name) {
		return virtualSourceConfig
	}
	return virtualSourceStore
}

// GET /virtual-servers: every virtual server served, sorted by name.
func (h *Handler) listVirtualServers(w http.ResponseWriter, r *http.Request) error {
	if h.opts.VirtualServers == nil {
		return unavailable("virtual servers")
	}
	return writeOffsetPage(w, r, func() []VirtualServerView {
		all := h.opts.VirtualServers.VirtualServers()
		out := make([]VirtualServerView, len(all))
		for i, vs := range all {
			out[i] = VirtualServerView{VirtualServer: vs, Source: h.virtualSource(vs.Name)}
		}
		return out
	})
}

// namedVirtualServer is the {name} of a /virtual-servers/{name} route,
// checked as routeName does before anything else.
func (h *Handler) namedVirtualServer(r *http.Request) (string, error) {
	name, err := routeName(r, agentsmcp.VirtualServerNamePattern, "virtual server")
	if err != nil {
		return "", err
	}
	if h.opts.VirtualServers == nil {
		return "", unavailable("virtual servers")
	}
	return name, nil
}

// GET /virtual-servers/{name}: the definition and the tools it exposes now.
func (h *Handler) getVirtualServer(w http.ResponseWriter, r *http.Request) error {
	name, err := h.namedVirtualServer(r)
	if err != nil {
		return err
	}
	for _, vs := range h.opts.VirtualServers.VirtualServers() {
		if vs.Name != name {
			continue
		}
		tools, dropped, _ := h.opts.VirtualServers.VirtualServerTools(name)
		if tools == nil {
			tools = []*mcp.Tool{}
		}
		writeJSON(w, http.StatusOK, VirtualServerView{VirtualServer: vs, Source: h.virtualSource(name), ExposedTools: tools, Dropped: dropped})
		return nil
	}
	return notFoundf("no virtual server named %q", name)
}

// storeWrite checks what a write shares: a store, and a name the config
// file does not hold.
func (h *Handler) storeWrite(name string) error {
	if h.opts.VirtualServers == nil || h.opts.VirtualServerStore == nil {
		return unavailable("virtual server management")
	}
	if h.opts.VirtualServers.IsConfigVirtualServer(name) {
		return agentsmcp.Errorf(agentsmcp.ECONFLICT, "virtual server %q is defined in the config file; change it there", name)
	}
	return nil
}

// synced makes this replica serve the store's definitions at once; a
// failure is logged, as the sync loop catches up.
func (h *Handler) synced(ctx context.Context) {
	if err := h.opts.VirtualServers.SyncVirtualServers(ctx, h.opts.VirtualServerStore); err != nil {
		h.opts.Logger.Warn("virtual servers not re-read after a change; the sync loop will", "error", err)
	}
}

// POST /virtual-servers: 201 with the stored definition.
func (h *Handler) createVirtualServer(w http.ResponseWriter, r *http.Request) error {
	if _, err := queryParams(r); err != nil {
		return err
	}
	var in agentsmcp.VirtualServer
	if err := decodeBody(r, &in); err != nil {
		return err
	}
	if err := h.storeWrite(in.Name); err != nil {
		return err
	}
	in.Revision, in.CreatedAt = "", time.Time{}
	in.CreatedBy = agentsmcp.PrincipalIDFrom(r.Context())
	ctx, cancel := h.requestContext(r)
	defer cancel()
	if err := h.opts.VirtualServerStore.CreateVirtualServer(ctx, &in); err != nil {
		return err
	}
	h.synced(ctx)
	h.opts.Logger.Info("virtual server added through the admin API", "virtual_server", in.Name, "principal", in.CreatedBy)
	w.Header().Set("Location", Prefix+"/virtual-servers/"+in.Name)
	writeJSON(w, http.StatusCreated, VirtualServerView{VirtualServer: &in, Source: virtualSourceStore})
	return nil
}

// DELETE /virtual-servers/{name}: 204; the other replicas follow within
// their upstream_sync_interval.
func (h *Handler) deleteVirtualServer(w http.ResponseWriter, r *http.Request) error {
	name, err := h.namedVirtualServer(r)
	if err != nil {
		return err
	}
	if err := h.storeWrite(name); err != nil {
		return err
	}
	ctx, cancel := h.requestContext(r)
	defer cancel()
	if err := h.opts.VirtualServerStore.DeleteVirtualServer(ctx, name); err != nil {
		return err
	}
	h.synced(ctx)
	w.WriteHeader(http.StatusNoContent)
	return nil
}
