package mongo

import (
	"context"
	"encoding/json"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/validate"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// thoughtDoc is the stored form of a Thought, less its words array (the
// words of Request, see text.go), which is written on insert and never
// read back.
type thoughtDoc struct {
	ID               string              `bson:"_id"`
	Principal        string              `bson:"principal"` // absent before schema version 5: ""
	Request          string              `bson:"request"`
	SubGoals         []string            `bson:"subGoals"`
	Reasoning        string              `bson:"reasoning"`
	Approaches       []string            `bson:"approaches"`
	Constraints      []string            `bson:"constraints"`
	Assumptions      []string            `bson:"assumptions"`
	Uncertainties    []string            `bson:"uncertainties"`
	Confidence       float64             `bson:"confidence"`
	RecommendedTools []recommendationDoc `bson:"recommendedTools"`
	CreatedAt        time.Time           `bson:"createdAt"`
}

type recommendationDoc struct {
	Tool   string `bson:"tool"`
	Reason string `bson:"reason,omitempty"`
}

func (d *thoughtDoc) thought() *agentsmcp.Thought {
	th := &agentsmcp.Thought{
		ID:               d.ID,
		Principal:        d.Principal,
		Request:          d.Request,
		SubGoals:         d.SubGoals,
		Reasoning:        d.Reasoning,
		Approaches:       d.Approaches,
		Constraints:      d.Constraints,
		Assumptions:      d.Assumptions,
		Uncertainties:    d.Uncertainties,
		Confidence:       d.Confidence,
		RecommendedTools: make([]agentsmcp.ToolRecommendation, len(d.RecommendedTools)),
		CreatedAt:        d.CreatedAt.UTC(),
	}
	for i, r := range d.RecommendedTools {
		th.RecommendedTools[i] = agentsmcp.ToolRecommendation(r)
	}
	return th
}

// CreateThought validates th, assigns ID and CreatedAt when empty, and
// inserts it; on success th holds the stored ID and CreatedAt (UTC,
// millisecond precision). EINVALID for a broken invariant, ECONFLICT for a
// taken ID.
func (db *DB) CreateThought(ctx context.Context, th *agentsmcp.Thought) error {
	if err := validate.Thought(th); err != nil {
		return err
	}
	d := thoughtDoc{
		ID:               th.ID,
		Principal:        th.Principal,
		Request:          th.Request,
		SubGoals:         orEmpty(th.SubGoals),
		Reasoning:        th.Reasoning,
		Approaches:       orEmpty(th.Approaches),
		Constraints:      orEmpty(th.Constraints),
		Assumptions:      orEmpty(th.Assumptions),
		Uncertainties:    orEmpty(th.Uncertainties),
		Confidence:       th.Confidence,
		RecommendedTools: make([]recommendationDoc, len(th.RecommendedTools)),
		CreatedAt:        ms(th.CreatedAt),
	}
	for i, r := range th.RecommendedTools {
		d.RecommendedTools[i] = recommendationDoc(r)
	}
	if d.ID == "" {
		d.ID = agentsmcp.NewID(agentsmcp.ThoughtIDPrefix)
	}
	if th.CreatedAt.IsZero() {
		d.CreatedAt = db.nowMs()
	}
	stored := struct {
		Doc   thoughtDoc `bson:",inline"`
		Words []string   `bson:"words"`
	}{d, words(d.Request)}
	if _, err := db.db.Collection(colThoughts).InsertOne(ctx, &stored); err != nil {
		return wrap(err, "thought "+d.ID)
	}
	th.ID, th.CreatedAt = d.ID, d.CreatedAt
	return nil
}

// FindThoughtByID returns ENOTFOUND for an unknown id.
func (db *DB) FindThoughtByID(ctx context.Context, id string) (*agentsmcp.Thought, error) {
	var d thoughtDoc
	if err := db.db.Collection(colThoughts).FindOne(ctx, bson.D{{Key: "_id", Value: id}}, options.FindOne().SetProjection(noWords)).Decode(&d); err != nil {
		return nil, wrap(err, "thought "+id)
	}
	return d.thought(), nil
}

// FindThoughts lists thoughts whose Request holds every word of f.Text,
// newest first (ties by id, highest first). EINVALID for a cursor that
// does not parse.
func (db *DB) FindThoughts(ctx context.Context, f agentsmcp.ThoughtFilter) ([]*agentsmcp.Thought, string, error) {
	var clauses []bson.D
	if f.Principal != "" {
		clauses = append(clauses, bson.D{{Key: "principal", Value: f.Principal}})
	}
	docs, next, err := newestFirstPage(ctx, db.db.Collection(colThoughts), agentsmcp.ThoughtIDPrefix, clauses, f.Text, f.Cursor, f.Limit,
		func(d *thoughtDoc) (time.Time, string) { return d.CreatedAt, d.ID })
	if err != nil {
		return nil, "", err
	}
	items := make([]*agentsmcp.Thought, len(docs))
	for i := range docs {
		items[i] = docs[i].thought()
	}
	return items, next, nil
}

// planDoc is the stored form of a Plan. JSON the caller gave (arguments,
// inputs) is kept as strings: verbatim, and free of BSON's rules on keys
// ('$', '.').
type planDoc struct {
	ID        string    `bson:"_id"`
	ThoughtID string    `bson:"thoughtId"`
	Principal string    `bson:"principal"` // absent before schema version 5: ""
	Request   string    `bson:"request"`
	Goal      string    `bson:"goal"`
	Steps     []stepDoc `bson:"steps"`
	Inputs    string    `bson:"inputs"`
	CreatedAt time.Time `bson:"createdAt"`
}

type stepDoc struct {
	ID                string    `bson:"id"`
	Tool              string    `bson:"tool"`
	Arguments         string    `bson:"arguments,omitempty"`
	DependsOn         []string  `bson:"dependsOn,omitempty"`
	Retry             *retryDoc `bson:"retry,omitempty"`
	TimeoutNs         int64     `bson:"timeoutNs,omitempty"`
	NeedsConfirmation bool      `bson:"needsConfirmation,omitempty"`
	Description       string    `bson:"description,omitempty"`
}

type retryDoc struct {
	MaxAttempts      int64 `bson:"maxAttempts"`
	InitialBackoffNs int64 `bson:"initialBackoffNs"`
	MaxBackoffNs     int64 `bson:"maxBackoffNs"`
}

func (d *planDoc) plan() *agentsmcp.Plan {
	p := &agentsmcp.Plan{
		ID:        d.ID,
		ThoughtID: d.ThoughtID,
		Principal: d.Principal,
		Request:   d.Request,
		Goal:      d.Goal,
		Steps:     make([]agentsmcp.PlanStep, len(d.Steps)),
		Inputs:    rawOrNil(d.Inputs),
		CreatedAt: d.CreatedAt.UTC(),
	}
	for i, s := range d.Steps {
		p.Steps[i] = agentsmcp.PlanStep{
			ID: s.ID, Tool: s.Tool, Arguments: rawOrNil(s.Arguments), DependsOn: s.DependsOn,
			Timeout: time.Duration(s.TimeoutNs), NeedsConfirmation: s.NeedsConfirmation, Description: s.Description,
		}
		if r := s.Retry; r != nil {
			p.Steps[i].Retry = &agentsmcp.RetryPolicy{MaxAttempts: int(r.MaxAttempts),
				InitialBackoff: time.Duration(r.InitialBackoffNs), MaxBackoff: time.Duration(r.MaxBackoffNs)}
		}
	}
	return p
}

// CreatePlan validates p, assigns ID and CreatedAt when empty, and inserts
// it; on success p holds the stored ID and CreatedAt. EINVALID for a broken
// invariant, ECONFLICT for a taken ID.
func (db *DB) CreatePlan(ctx context.Context, p *agentsmcp.Plan) error {
	if err := validate.Plan(p); err != nil {
		return err
	}
	d := planDoc{
		ID:        p.ID,
		ThoughtID: p.ThoughtID,
		Principal: p.Principal,
		Request:   p.Request,
		Goal:      p.Goal,
		Steps:     make([]stepDoc, len(p.Steps)),
		Inputs:    string(p.Inputs),
		CreatedAt: ms(p.CreatedAt),
	}
	for i, s := range p.Steps {
		d.Steps[i] = stepDoc{
			ID: s.ID, Tool: s.Tool, Arguments: string(s.Arguments), DependsOn: s.DependsOn,
			TimeoutNs: int64(s.Timeout), NeedsConfirmation: s.NeedsConfirmation, Description: s.Description,
		}
		if r := s.Retry; r != nil {
			d.Steps[i].Retry = &retryDoc{int64(r.MaxAttempts), int64(r.InitialBackoff), int64(r.MaxBackoff)}
		}
	}
	if d.ID == "" {
		d.ID = agentsmcp.NewID(agentsmcp.PlanIDPrefix)
	}
	if p.CreatedAt.IsZero() {
		d.CreatedAt = db.nowMs()
	}
	if _, err := db.db.Collection(colPlans).InsertOne(ctx, &d); err != nil {
		return wrap(err, "plan "+d.ID)
	}
	p.ID, p.CreatedAt = d.ID, d.CreatedAt
	return nil
}

// FindPlanByID returns ENOTFOUND for an unknown id.
func (db *DB) FindPlanByID(ctx context.Context, id string) (*agentsmcp.Plan, error) {
	var d planDoc
	if err := db.db.Collection(colPlans).FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&d); err != nil {
		return nil, wrap(err, "plan "+id)
	}
	return d.plan(), nil
}

// FindPlans lists plans matching f, newest first (ties by id, highest
// first). EINVALID for a cursor that does not parse.
func (db *DB) FindPlans(ctx context.Context, f agentsmcp.PlanFilter) ([]*agentsmcp.Plan, string, error) {
	var clauses []bson.D
	if f.ThoughtID != "" {
		clauses = append(clauses, bson.D{{Key: "thoughtId", Value: f.ThoughtID}})
	}
	if f.Principal != "" {
		clauses = append(clauses, bson.D{{Key: "principal", Value: f.Principal}})
	}
	docs, next, err := newestFirstPage(ctx, db.db.Collection(colPlans), agentsmcp.PlanIDPrefix, clauses, "", f.Cursor, f.Limit,
		func(d *planDoc) (time.Time, string) { return d.CreatedAt, d.ID })
	if err != nil {
		return nil, "", err
	}
	items := make([]*agentsmcp.Plan, len(docs))
	for i := range docs {
		items[i] = docs[i].plan()
	}
	return items, next, nil
}

// rawOrNil is the JSON of a stored string: nil when empty.
func rawOrNil(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}
