package agentsmcp

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
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
	ThoughtIDPrefix  = "thg"
	PlanIDPrefix     = "pln"
	TaskIDPrefix     = "tsk"
	AuditIDPrefix    = "aud"
)

// PatternID is the id of the plan pattern (goal, steps): "pat_" and the
// first 128 bits of SHA-256 over the JSON array [goal, steps...], written as
// a ULID. JSON keeps the key unambiguous (["a b"] and ["a", "b"] differ), and
// deriving the id makes it the pattern's unique key, so the same pattern has
// the same id in every store and replica; recording a use is then a single
// upsert. It is part of the stored data: its derivation must never change.
func PatternID(goal string, steps []string) string {
	b, err := json.Marshal(append([]string{goal}, steps...))
	if err != nil {
		panic(err) // a []string always marshals
	}
	sum := sha256.Sum256(b)
	return PatternIDPrefix + "_" + ulid.ULID(sum[:16]).String()
}
