package remote

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// This file names the tools of an upstream as clients see them.

// MetaUpstreamTool is the _meta key under which an aliased tool (see
// [ToolAlias]) carries the upstream's own name of the tool in tools/list.
const MetaUpstreamTool = "agents-mcp/upstreamTool"

// maxToolName is the length limit of [agentsmcp.ToolNamePattern].
const maxToolName = 64

// aliasHashLen is how many hex digits of SHA-256 end an alias.
const aliasHashLen = 8

// toolNameChars is [agentsmcp.ToolNamePattern] without its length limit: a
// prefixed name made only of these characters but too long gets an alias,
// any other invalid name is a problem.
var toolNameChars = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// ToolAlias returns the name under which the tool of an upstream is exposed
// when "<upstream>__<tool>" is longer than 64 characters: the first 55
// characters of that name (trailing '_' of the tool's part removed), then
// '_' and the first 8 hex digits of the SHA-256 of the whole prefixed name. The alias depends
// only on the two names, so every replica and every restart gives the
// same one, and it keeps the "<upstream>__" prefix (upstream names have at
// most 32 characters), so allowlist patterns such as "everything__*"
// admit it.
//
// attempt is 0 except when the alias is already taken by another tool of
// the same upstream: attempt n > 0 hashes the prefixed name followed by
// "#n" instead (see listTools for the order in which names are claimed).
func ToolAlias(upstream, tool string, attempt int) string {
	prefix := upstream + agentsmcp.NamespaceSeparator
	full := prefix + tool
	if attempt > 0 {
		full += "#" + strconv.Itoa(attempt)
	}
	sum := sha256.Sum256([]byte(full))
	keep := max(maxToolName-1-aliasHashLen-len(prefix), 0)
	head := strings.TrimRight(truncateBytes(tool, keep), "_")
	return prefix + head + "_" + hex.EncodeToString(sum[:])[:aliasHashLen]
}

// truncateBytes returns s cut to at most n bytes. It is used on names of
// ASCII characters only.
func truncateBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// needsAlias reports whether a prefixed tool name is invalid only because it
// is too long.
func needsAlias(prefixed string) bool {
	return len(prefixed) > maxToolName && toolNameChars.MatchString(prefixed)
}
