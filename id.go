package agentsmcp

import (
	"crypto/rand"
	"regexp"
	"time"

	"github.com/oklog/ulid/v2"
)

// NewID returns a new identifier: prefix, '_', and a ULID. IDs are safe in
// URLs and paths, unique across replicas without coordination, and sort by
// creation time, which makes them good pagination keys.
func NewID(prefix string) string {
	return prefix + "_" + ulid.MustNew(ulid.Timestamp(time.Now()), rand.Reader).String()
}

// IDPattern is what every stored id looks like.
var IDPattern = regexp.MustCompile(`^[a-z]{2,8}_[0-9A-HJKMNP-TV-Z]{26}$`)

// ID prefixes, one per aggregate.
const (
	InsightIDPrefix  = "ins"
	LearningIDPrefix = "lrn"
	PatternIDPrefix  = "pat"
)
