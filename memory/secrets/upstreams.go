package secrets

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// UpstreamDefinitions is an UpstreamService that keeps the header values
// of the definitions it stores (upstream MCP servers and HTTP tool
// sources added through the admin API) sealed in the UpstreamService it
// wraps: headers carry API keys and tokens, and every replica needs them
// in clear to connect, so they are sealed with the key every replica
// shares. On the way in each value of the config's "headers" object is
// sealed; on the way out it is opened. A definition with headers cannot be
// created without a key (EINVALID): the store would otherwise hold them in
// clear. A value that cannot be opened (another key) is left out, so the
// upstream is called without it and its refusal says what is wrong. A
// value stored in clear by a version before this one is read as it is.
type UpstreamDefinitions struct {
	agentsmcp.UpstreamService
	Sealer *Sealer
	// Logger, when set, is told once about each header value that cannot
	// be opened (its name, never its value): without it an operator would
	// see only the upstream's refusals after a change of key.
	Logger *slog.Logger
	warned sync.Map // definition revision + header name → struct{}: told already
}

var _ agentsmcp.UpstreamService = (*UpstreamDefinitions)(nil)

// CreateUpstreamDefinition stores d with its header values sealed; d
// itself keeps them in clear and gets the Revision and CreatedAt the
// store assigned.
func (w *UpstreamDefinitions) CreateUpstreamDefinition(ctx context.Context, d *agentsmcp.UpstreamDefinition) error {
	cfg, headers, err := configHeaders(d.Config)
	if err != nil {
		// Refused here, not left to the store, which would keep headers
		// it cannot read (not an object of strings) in clear.
		return agentsmcp.Errorf(agentsmcp.EINVALID, "%s: %s", d.Name, agentsmcp.ErrorMessage(err))
	}
	if len(headers) == 0 {
		return w.UpstreamService.CreateUpstreamDefinition(ctx, d)
	}
	if !w.Sealer.Encrypts() {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "%s: headers hold secrets and are stored only sealed, which needs a secrets key (tasks.secrets_key); "+
			"configure one, or keep the secret in the credential store (POST /admin/v1/credentials) instead of a header", d.Name)
	}
	for k, v := range headers {
		if headers[k], err = w.Sealer.SealString(v); err != nil {
			return err
		}
	}
	if cfg["headers"], err = json.Marshal(headers); err != nil {
		return err
	}
	sealed := *d
	if sealed.Config, err = json.Marshal(cfg); err != nil {
		return err
	}
	if err := w.UpstreamService.CreateUpstreamDefinition(ctx, &sealed); err != nil {
		return err
	}
	d.Kind, d.Revision, d.CreatedAt = sealed.Kind, sealed.Revision, sealed.CreatedAt
	return nil
}

// ListUpstreamDefinitions returns the definitions of kind with their
// header values opened.
func (w *UpstreamDefinitions) ListUpstreamDefinitions(ctx context.Context, kind string) ([]*agentsmcp.UpstreamDefinition, error) {
	defs, err := w.UpstreamService.ListUpstreamDefinitions(ctx, kind)
	if err != nil {
		return nil, err
	}
	for _, d := range defs {
		cfg, headers, err := configHeaders(d.Config)
		if err != nil || len(headers) == 0 {
			continue
		}
		for k, v := range headers {
			if !strings.HasPrefix(v, sealedPrefix) {
				continue
			}
			if headers[k], err = w.Sealer.OpenString(v); err != nil {
				delete(headers, k)
				if _, told := w.warned.LoadOrStore(d.Revision+"\x00"+k, struct{}{}); !told && w.Logger != nil {
					w.Logger.WarnContext(ctx, "a stored header value cannot be opened with the configured secrets key; it is left out until the definition is added again",
						"definition", d.Name, "kind", d.Kind, "header", k)
				}
			}
		}
		if cfg["headers"], err = json.Marshal(headers); err != nil {
			return nil, err
		}
		if d.Config, err = json.Marshal(cfg); err != nil {
			return nil, err
		}
	}
	return defs, nil
}

// configHeaders decodes a definition's config and its "headers" object.
func configHeaders(raw json.RawMessage) (cfg map[string]json.RawMessage, headers map[string]string, err error) {
	if err := json.Unmarshal(raw, &cfg); err != nil || cfg == nil {
		return nil, nil, agentsmcp.Errorf(agentsmcp.EINVALID, "config must be a JSON object")
	}
	if h, ok := cfg["headers"]; ok {
		if err := json.Unmarshal(h, &headers); err != nil {
			return nil, nil, agentsmcp.Errorf(agentsmcp.EINVALID, "config headers must be an object of strings")
		}
	}
	return cfg, headers, nil
}
