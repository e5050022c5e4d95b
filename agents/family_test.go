package agents_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/memory/embed"
)

func TestFamilyOf(t *testing.T) {
	for _, c := range []struct{ request, want string }{
		{"What is the weather in Paris today?", "weather <name> <date>"},
		{"What is the weather in Lima today?", "weather <name> <date>"},
		{"Weather in Rio de Janeiro on Monday", "weather <name> <date>"},
		{"Convert 100 USD to EUR", "convert <num> <name> <name>"},
		{"Convert 250 GBP to JPY.", "convert <num> <name> <name>"},
		{"How much is $1,200 in euros?", "much <num> euros"},
		{"Echo the message hello", "echo message <text>"},
		{"Echo the message goodbye", "echo message <text>"},
		{"Please Echo the message Hello World", "echo message <text>"},
		{"Send a message to Alice saying the build is green", "send message <name> saying <text>"},
		{"Tell Alice's manager that it broke", "tell <name> manager broke"},
		{"Read the file /etc/hosts", "read file <path>"},
		{"Show ticket INC-1234", "show ticket <id>"},
		{"Schedule a meeting on 2026-12-03 at 10:30", "schedule meeting <date> <date>"},
		{"Remind me to call Mom tomorrow at 5pm", "remind call <name> <date> <date>"},
		{"Email jane@example.com the report from https://x.io/r", "email <email> report <url>"},
		{"Search for \"golang generics\"", "search <text>"},
		{"Note: back at 5. Then read it", "note <text> read"},
		{"Convert The Quarterly Report To PDF", "convert quarterly report pdf"}, // Title Case: capitals say nothing
		{"may I march on", "march"},
		{"the", "the"},
	} {
		if got := agents.FamilyOf(c.request); got != c.want {
			t.Errorf("FamilyOf(%q) = %q, want %q", c.request, got, c.want)
		}
	}
}

// familyPair is one labelled pair of testdata/families.json.
type familyPair struct {
	Domain string `json:"domain"`
	Same   bool   `json:"same"`
	A      string `json:"a"`
	B      string `json:"b"`
}

// confusion counts a matcher's decisions against the labels.
type confusion struct{ tp, fp, fn, tn int }

func (c *confusion) add(said, same bool) {
	switch {
	case said && same:
		c.tp++
	case said:
		c.fp++
	case same:
		c.fn++
	default:
		c.tn++
	}
}

func (c confusion) precision() float64 {
	if c.tp+c.fp == 0 {
		return 1
	}
	return float64(c.tp) / float64(c.tp+c.fp)
}

func (c confusion) recall() float64 { return float64(c.tp) / float64(c.tp+c.fn) }

func (c confusion) String() string {
	return fmt.Sprintf("precision %.3f recall %.3f (tp %d fp %d fn %d tn %d)", c.precision(), c.recall(), c.tp, c.fp, c.fn, c.tn)
}

// The family key, and the family a request is given when it is resolved
// against a past one (agents.Families with the offline hash embedder, as
// the planner resolves it), are measured on a labelled set of request
// pairs (testdata/families.json): same family when one plan serves both
// with other values, different when the intent differs. It logs every
// miss and the precision/recall over a sweep of similarity thresholds.
//
// Floors: a join of two different intents reuses a wrong plan and blames
// tools for failures on another task, so precision must be 1 for the key
// and at least 0.95 for the resolved family. Recall: the pairs the key
// misses are the ones whose entities are lower-case ("weather in paris"
// and "… in lima"), which nothing offline tells from words of the intent;
// resolving must catch the rest (an extra date, one lower-case entity
// against a capitalised one). On 90 pairs that is key recall >= 0.8 and
// resolved recall >= 0.85 (measured: 0.84 and 0.89, precision 1 and 1, at
// the default threshold; below 0.9 the hash embedder joins "Convert 100
// USD to EUR" with "Send 100 USD to Alice").
func TestFamilyLabelledSet(t *testing.T) {
	raw, err := os.ReadFile("testdata/families.json")
	if err != nil {
		t.Fatal(err)
	}
	var pairs []familyPair
	if err := json.Unmarshal(raw, &pairs); err != nil {
		t.Fatal(err)
	}
	if len(pairs) < 60 {
		t.Fatalf("the labelled set has %d pairs, want at least 60", len(pairs))
	}
	ctx := context.Background()
	// measure resolves b, the new request, against a, a past one, as the
	// planner does.
	measure := func(minSimilarity float64, log bool) confusion {
		families := &agents.Families{Embedder: embed.Hash{}, MinSimilarity: minSimilarity}
		var c confusion
		for _, p := range pairs {
			m := families.Resolve(ctx, p.B, []*agentsmcp.Learning{{Query: p.A}})
			joined := m.Family == agents.FamilyOf(p.A)
			c.add(joined, p.Same)
			if log && joined != p.Same {
				t.Logf("%s: same=%v joined=%v similarity=%.2f\n\t%q → %q\n\t%q → %q", p.Domain, p.Same, joined, m.Similarity,
					p.A, agents.FamilyOf(p.A), p.B, agents.FamilyOf(p.B))
			}
		}
		return c
	}
	var key confusion
	for _, p := range pairs {
		key.add(agents.FamilyOf(p.A) == agents.FamilyOf(p.B), p.Same)
	}
	for th := 0.5; th < 0.96; th += 0.05 {
		t.Logf("joining at similarity >= %.2f: %v", th, measure(th, false))
	}
	joined := measure(agents.DefaultFamilySimilarity, true)
	t.Logf("%d pairs (%d same family)", len(pairs), key.tp+key.fn)
	t.Logf("family key:             %v", key)
	t.Logf("resolved family:        %v", joined)
	if key.precision() < 1 || key.recall() < 0.8 {
		t.Errorf("family key: %v; want precision 1 and recall >= 0.8", key)
	}
	if joined.precision() < 0.95 || joined.recall() < 0.85 {
		t.Errorf("resolved family: %v; want precision >= 0.95 and recall >= 0.85", joined)
	}
}
