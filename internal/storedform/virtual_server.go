package storedform

import (
	"encoding/json"
	"fmt"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// VirtualServer returns the definition of v that both stores keep, as JSON:
// v without the fields the store assigns (Revision, CreatedBy, CreatedAt).
func VirtualServer(v *agentsmcp.VirtualServer) (string, error) {
	d := *v
	d.Revision, d.CreatedBy, d.CreatedAt = "", "", time.Time{}
	b, err := json.Marshal(&d)
	if err != nil {
		return "", fmt.Errorf("encode virtual server %q: %w", v.Name, err)
	}
	return string(b), nil
}
