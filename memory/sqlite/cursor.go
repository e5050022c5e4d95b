package sqlite

import (
	"encoding/base64"
	"strconv"
	"strings"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// A cursor is the sort key of the last item of a page: a number (created_at
// in unix milliseconds, or a pattern's successes) and the item's id, which
// breaks ties. Its text is URL-safe base64 of "kind:number:id"; kind names
// the list it belongs to, so a cursor of one list is refused by another.
// Cursors are opaque to callers and checked in full when decoded.
type cursor struct {
	n  int64
	id string
}

// Cursor kinds.
const (
	insightCursor  = "i"
	learningCursor = "l"
	patternCursor  = "p"
)

func encodeCursor(kind string, c cursor) string {
	return base64.RawURLEncoding.EncodeToString([]byte(kind + ":" + strconv.FormatInt(c.n, 10) + ":" + c.id))
}

// decodeCursor parses s, which must have been made by encodeCursor with the
// same kind; EINVALID otherwise.
func decodeCursor(kind, s string) (cursor, error) {
	invalid := agentsmcp.Errorf(agentsmcp.EINVALID, "cursor %q is not valid for this list", s)
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return cursor{}, invalid
	}
	k, rest, ok := strings.Cut(string(b), ":")
	if !ok || k != kind {
		return cursor{}, invalid
	}
	num, id, ok := strings.Cut(rest, ":")
	if !ok {
		return cursor{}, invalid
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || !agentsmcp.IDPattern.MatchString(id) {
		return cursor{}, invalid
	}
	return cursor{n: n, id: id}, nil
}
