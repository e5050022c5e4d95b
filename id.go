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

// PatternID is the id of the plan pattern (goal, steps) of principal: "pat_"
// and the first 128 bits of SHA-256, written as a ULID, over the JSON array
// [goal, steps...] for the anonymous principal (or an empty one, which
// stands for it; the ids of patterns recorded before patterns had a
// principal), and over the JSON object {"principal", "goal", "steps"} for
// any other principal. JSON keeps the key unambiguous (["a b"] and ["a",
// "b"] differ, and an object never encodes like an array), and deriving the
// id makes it the pattern's unique key, so the same pattern has the same id
// in every store and replica; recording a use is then a single upsert. It
// is part of the stored data: its derivation must never change.
func PatternID(principal, goal string, steps []string) string {
	var b []byte
	var err error
	if MemoryOwner(principal) == AnonymousPrincipal {
		b, err = json.Marshal(append([]string{goal}, steps...))
	} else {
		if steps == nil {
			steps = []string{}
		}
		b, err = json.Marshal(struct {
			Principal string   `json:"principal"`
			Goal      string   `json:"goal"`
			Steps     []string `json:"steps"`
		}{principal, goal, steps})
	}
	if err != nil {
		panic(err) // strings always marshal
	}
	sum := sha256.Sum256(b)
	return PatternIDPrefix + "_" + ulid.ULID(sum[:16]).String()
}
