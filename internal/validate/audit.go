package validate

import (
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
)

// AuditEntry checks the invariants of an AuditEntry (ID and At may be empty:
// the store assigns them). It checks that Arguments is valid JSON within
// its size limit, which it cannot tell from redacted.
func AuditEntry(e *agentsmcp.AuditEntry) error {
	if e == nil {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "audit entry is required")
	}
	switch {
	case e.ID != "" && (!agentsmcp.IDPattern.MatchString(e.ID) || !strings.HasPrefix(e.ID, agentsmcp.AuditIDPrefix+"_")):
		return agentsmcp.Errorf(agentsmcp.EINVALID, "audit entry id %q is malformed", storedform.TruncateUTF8(e.ID, 64))
	case !slices.Contains(agentsmcp.AuditKinds, e.Kind):
		return agentsmcp.Errorf(agentsmcp.EINVALID, "audit kind %q is not one of %v", storedform.TruncateUTF8(string(e.Kind), 64), agentsmcp.AuditKinds)
	case !slices.Contains(agentsmcp.AuditOutcomes, e.Outcome):
		return agentsmcp.Errorf(agentsmcp.EINVALID, "audit outcome %q is not one of %v", storedform.TruncateUTF8(string(e.Outcome), 64), agentsmcp.AuditOutcomes)
	case e.Target == "":
		return agentsmcp.Errorf(agentsmcp.EINVALID, "audit target is required")
	case e.Latency < 0:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "audit latency %v is negative", e.Latency)
	case len(e.Arguments) > agentsmcp.MaxAuditArgumentsBytes:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "audit arguments are %d bytes; the limit is %d", len(e.Arguments), agentsmcp.MaxAuditArgumentsBytes)
	case len(e.Arguments) > 0 && !json.Valid(e.Arguments):
		return agentsmcp.Errorf(agentsmcp.EINVALID, "audit arguments are not valid JSON")
	}
	for _, f := range []struct {
		name, value string
		limit       int
	}{
		{"principal", e.Principal, agentsmcp.MaxAuditFieldBytes},
		{"target", e.Target, agentsmcp.MaxAuditFieldBytes},
		{"requestId", e.RequestID, agentsmcp.MaxAuditFieldBytes},
		{"transport", e.Transport, agentsmcp.MaxAuditFieldBytes},
		{"client", e.Client, agentsmcp.MaxAuditFieldBytes},
		{"clientProfile", e.ClientProfile, agentsmcp.MaxAuditFieldBytes},
		{"error", e.Error, agentsmcp.MaxAuditErrorBytes},
	} {
		if len(f.value) > f.limit {
			return agentsmcp.Errorf(agentsmcp.EINVALID, "audit %s is %d bytes; the limit is %d", f.name, len(f.value), f.limit)
		}
		if !utf8.ValidString(f.value) {
			return agentsmcp.Errorf(agentsmcp.EINVALID, "audit %s is not valid UTF-8", f.name)
		}
	}
	return nil
}

// AuditBatch checks a batch for CreateAuditEntries: at most
// MaxAuditBatchEntries entries, each valid.
func AuditBatch(entries []*agentsmcp.AuditEntry) error {
	if len(entries) > agentsmcp.MaxAuditBatchEntries {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "audit batch has %d entries; the limit is %d", len(entries), agentsmcp.MaxAuditBatchEntries)
	}
	for i, e := range entries {
		if err := AuditEntry(e); err != nil {
			return agentsmcp.Errorf(agentsmcp.EINVALID, "audit entry %d: %s", i, agentsmcp.ErrorMessage(err))
		}
	}
	return nil
}

// AuditFilter checks the enumerated fields of a filter: a Kind or Outcome,
// when set, must be one of the valid values (a typo would otherwise
// silently match nothing).
func AuditFilter(f agentsmcp.AuditFilter) error {
	switch {
	case f.Kind != "" && !slices.Contains(agentsmcp.AuditKinds, f.Kind):
		return agentsmcp.Errorf(agentsmcp.EINVALID, "audit kind %q is not one of %v", storedform.TruncateUTF8(string(f.Kind), 64), agentsmcp.AuditKinds)
	case f.Outcome != "" && !slices.Contains(agentsmcp.AuditOutcomes, f.Outcome):
		return agentsmcp.Errorf(agentsmcp.EINVALID, "audit outcome %q is not one of %v", storedform.TruncateUTF8(string(f.Outcome), 64), agentsmcp.AuditOutcomes)
	}
	return nil
}
