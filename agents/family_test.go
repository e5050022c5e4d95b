package agents_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/internal/redact"
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
		{"add 6 to the temperature and note the sum on that entity", "add <num> temperature note sum entity"},
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
// resolving catches some of the rest (an extra date, one lower-case entity
// against a capitalised one in a key of three words or more). On 94 pairs
// that is key recall >= 0.8 and resolved recall >= 0.85 (measured: 0.83
// and 0.88, precision 1 and 1, at the default threshold; below 0.9 the
// hash embedder joins "Convert 100 USD to EUR" with "Send 100 USD to
// Alice").
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
	var key confusion
	for _, p := range pairs {
		key.add(agents.FamilyOf(p.A) == agents.FamilyOf(p.B), p.Same)
	}
	t.Logf("%d pairs (%d same family)", len(pairs), key.tp+key.fn)
	t.Logf("family key:             %v", key)
	if key.precision() < 1 || key.recall() < 0.8 {
		t.Errorf("family key: %v; want precision 1 and recall >= 0.8", key)
	}
	for _, e := range []struct {
		emb       agentsmcp.Embedder
		threshold float64
	}{{embed.Hash{}, agents.DefaultFamilySimilarity}, {embed.Semantic{}, agents.SemanticFamilySimilarity}} {
		// measure resolves b, the new request, against a, a past one, as the
		// planner does.
		measure := func(minSimilarity float64, log bool) confusion {
			families := &agents.Families{Embedder: e.emb, MinSimilarity: minSimilarity}
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
		for th := 0.5; th < 0.96; th += 0.05 {
			t.Logf("%s: joining at similarity >= %.2f: %v", e.emb.ID(), th, measure(th, false))
		}
		joined := measure(e.threshold, true)
		t.Logf("%s: resolved family at %.2f: %v", e.emb.ID(), e.threshold, joined)
		if joined.precision() < 0.95 || joined.recall() < 0.85 {
			t.Errorf("%s: resolved family: %v; want precision >= 0.95 and recall >= 0.85", e.emb.ID(), joined)
		}
	}
}

// Records stored before families keep their meaning: a learning or plan
// whose goal is the GoalOf of its request (the old key) is in the family
// of its request; one whose goal is a family it joined stays in it.
func TestFamilyOfStoredRecords(t *testing.T) {
	const paris = "What is the weather in Paris today?"
	old := &agentsmcp.Learning{Query: paris, Goal: agents.GoalOf(paris)}
	if got := agents.LearningFamily(old); got != "weather <name> <date>" {
		t.Errorf("family of a learning keyed by goal: %q", got)
	}
	joined := &agentsmcp.Learning{Query: "weather in paris today", Goal: "weather <name> <date>"}
	if got := agents.LearningFamily(joined); got != "weather <name> <date>" {
		t.Errorf("family of a learning that joined a family: %q", got)
	}
	if got := agents.PlanFamily(&agentsmcp.Plan{Request: paris, Goal: agents.GoalOf(paris)}); got != "weather <name> <date>" {
		t.Errorf("family of a plan keyed by goal: %q", got)
	}

	// An old learning for Paris is of the family of a new request for
	// Lima: the request keeps its key, nothing to join.
	var fs *agents.Families
	if m := fs.Resolve(t.Context(), "What is the weather in Lima today?", []*agentsmcp.Learning{old}); m.Family != "weather <name> <date>" || m.Joined != "" {
		t.Errorf("Lima against an old Paris learning: %+v", m)
	}
	// A lower-case city is one entity away from a past family: it joins
	// without an embedder.
	if m := fs.Resolve(t.Context(), "what is the weather in lima today", []*agentsmcp.Learning{old}); m.Family != "weather <name> <date>" || m.Joined != paris {
		t.Errorf("lower-case Lima against a Paris learning: %+v", m)
	}
}

// The similarity threshold decides joins by embedding: at the default, a
// payment does not join a conversion; at a loose 0.5 it would. A failing
// embedder leaves the request its own key.
func TestFamiliesThreshold(t *testing.T) {
	past := []*agentsmcp.Learning{{Query: "Convert 100 USD to EUR"}}
	const send = "Send 100 USD to Alice"
	if m := (&agents.Families{Embedder: embed.Hash{}}).Resolve(t.Context(), send, past); m.Family != agents.FamilyOf(send) {
		t.Errorf("at the default threshold the payment joined %+v", m)
	}
	if m := (&agents.Families{Embedder: embed.Hash{}, MinSimilarity: 0.5}).Resolve(t.Context(), send, past); m.Family != agents.FamilyOf(past[0].Query) || m.Similarity < 0.5 {
		t.Errorf("at 0.5 the payment did not join the conversion: %+v", m)
	}
	if m := (&agents.Families{Embedder: failingEmbedder{}, MinSimilarity: 0.01}).Resolve(t.Context(), send, past); m.Family != agents.FamilyOf(send) {
		t.Errorf("with a failing embedder: %+v", m)
	}
}

// failingEmbedder fails every call, as an unreachable embedding service.
type failingEmbedder struct{}

func (failingEmbedder) ID() string      { return "failing" }
func (failingEmbedder) Dimensions() int { return embed.HashDimensions }
func (failingEmbedder) Embed(context.Context, []string) ([][]float32, error) {
	return nil, agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "embedder down")
}

// FamilyOf takes any text: the key is valid UTF-8, bounded, never empty
// for a request with a letter, and the same for the same request.
func FuzzFamilyOf(f *testing.F) {
	for _, seed := range []string{"What is the weather in Paris today?", "DM Priya: hi", "Rio de Janeiro", "message:", "Please Echo",
		"\"unterminated", "a.b.c. D. e", "#x @y", "\xff\xfe", strings.Repeat("Word ", 2000)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, request string) {
		got := agents.FamilyOf(request)
		if !utf8.ValidString(got) || len(got) > agentsmcp.MaxQueryTextBytes {
			t.Fatalf("FamilyOf(%q) = %q: invalid or too long", request, got)
		}
		if got == "" && strings.IndexFunc(request, unicode.IsLetter) >= 0 {
			t.Fatalf("FamilyOf(%q) is empty", request)
		}
		if again := agents.FamilyOf(request); again != got {
			t.Fatalf("FamilyOf(%q) = %q, then %q", request, got, again)
		}
	})
}

// A secret in a request never reaches its family nor its goal, which are
// stored and shown as keys (the plan's goal, the thought's reasoning,
// pattern keys), whatever the wording; and a stored request, redacted, is
// in the family of the request it was.
func TestFamilyAndGoalHoldNoSecret(t *testing.T) {
	for _, c := range []struct{ request, secret string }{
		{"Delete post 5 password=hunter2", "hunter2"},
		{"Delete post 5 password: hunter2", "hunter2"},
		{"Delete post 5 password hunter2", "hunter2"},
		{"Delete post 5, my password is hunter2", "hunter2"},
		{"Delete post 5 with api key abc123xyz", "abc123xyz"},
		{"Delete post 5 token=tok3nvalue", "tok3nvalue"},
		{"Delete post 5 Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln", "eyJ"},
		{"Delete post 5 key k9Xq2LmP7vR4tY8wZ1aB3cD5eF6gH0jK", "k9Xq2LmP7vR4tY8wZ1aB3cD5eF6gH0jK"},
	} {
		family, goal := agents.FamilyOf(c.request), agents.GoalOf(c.request)
		for what, key := range map[string]string{"family": family, "goal": goal} {
			if strings.Contains(strings.ToLower(key), strings.ToLower(c.secret)) || !strings.Contains(key, "<secret>") {
				t.Errorf("%s of %q = %q: want the secret as <secret>", what, c.request, key)
			}
		}
		stored := redact.Text(c.request, agentsmcp.MaxQueryTextBytes)
		if got := agents.FamilyOf(stored); got != family {
			t.Errorf("family of the stored request %q = %q, want the request's %q", stored, got, family)
		}
	}
	if got := agents.FamilyOf("Delete post 5 password=hunter2"); got != "delete post <num> password <secret>" {
		t.Errorf("FamilyOf = %q", got)
	}
	if a, b := agents.FamilyOf("Delete post 5 password hunter2"), agents.FamilyOf("Delete post 9 password: swordfish"); a != b {
		t.Errorf("two requests that differ by their post and password: %q and %q", a, b)
	}
}
