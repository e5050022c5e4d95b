package agentsmcp

import (
	"crypto/rand"
	"regexp"
	"time"

	"github.com/oklog/ulid/v2"
)

// NewID returns prefix, '_' and a ULID: URL-safe, unique across replicas,
// sorted by creation time.
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
	ThoughtIDPrefix  = "thg"
	PlanIDPrefix     = "pln"
	TaskIDPrefix     = "tsk"
	AuditIDPrefix    = "aud"
)
