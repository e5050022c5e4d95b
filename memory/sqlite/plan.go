package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
	"github.com/agents-mcp/agents-mcp/internal/validate"
)

// Cursor kinds of the lists of this file and task.go (see cursor.go).
const (
	thoughtCursor = "th"
	planCursor    = "pl"
	taskCursor    = "tk"
)

const thoughtColumns = `t.id, t.principal, t.request, t.sub_goals, t.reasoning, t.approaches, t.constraints, t.assumptions,
	t.uncertainties, t.confidence, t.recommended_tools, t.created_at`

const insertThoughtSQL = `INSERT INTO thoughts
	(id, principal, request, sub_goals, reasoning, approaches, constraints, assumptions, uncertainties, confidence, recommended_tools, created_at)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

const findThoughtByIDSQL = "SELECT " + thoughtColumns + " FROM thoughts t WHERE t.id = ?"

// storedRecommendation is the stored form of a ToolRecommendation, an
// entry of thoughts.recommended_tools. Its JSON names are part of the
// schema.
type storedRecommendation struct {
	Tool   string `json:"tool"`
	Reason string `json:"reason,omitempty"`
}

// CreateThought implements [agentsmcp.ThoughtService]. On success th holds
// the stored ID and CreatedAt (UTC, at millisecond precision).
func (db *DB) CreateThought(ctx context.Context, th *agentsmcp.Thought) error {
	if err := validate.Thought(th); err != nil {
		return err
	}
	id, created := th.ID, th.CreatedAt
	if id == "" {
		id = agentsmcp.NewID(agentsmcp.ThoughtIDPrefix)
	}
	if created.IsZero() {
		created = now()
	}
	recs := make([]storedRecommendation, len(th.RecommendedTools))
	for i, r := range th.RecommendedTools {
		recs[i] = storedRecommendation(r)
	}
	recsJSON, err := json.Marshal(recs)
	if err != nil {
		return fmt.Errorf("encode thought: %w", err)
	}
	createdMS := toMillis(created)
	err = db.write(ctx, func(tx *sql.Tx) error {
		_, err := db.txStmt(ctx, tx, insertThoughtSQL).ExecContext(ctx,
			id, th.Principal, th.Request, encodeList(th.SubGoals), th.Reasoning, encodeList(th.Approaches), encodeList(th.Constraints),
			encodeList(th.Assumptions), encodeList(th.Uncertainties), th.Confidence, string(recsJSON), createdMS)
		if isUnique(err) {
			return agentsmcp.Errorf(agentsmcp.ECONFLICT, "thought %q already exists", id)
		} else if err != nil {
			return fmt.Errorf("insert thought: %w", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	th.ID, th.CreatedAt = id, fromMillis(createdMS)
	return nil
}

// FindThoughtByID implements [agentsmcp.ThoughtService].
func (db *DB) FindThoughtByID(ctx context.Context, id string) (*agentsmcp.Thought, error) {
	row, err := db.queryRow(ctx, findThoughtByIDSQL, id)
	if err != nil {
		return nil, fmt.Errorf("find thought %q: %w", id, err)
	}
	th, err := scanThought(row)
	if err != nil {
		return nil, notFound(err, "thought", id)
	}
	return th, nil
}

// FindThoughts implements [agentsmcp.ThoughtService], reading the index
// (created_at, id) backwards; a text filter takes its matches from FTS5.
func (db *DB) FindThoughts(ctx context.Context, f agentsmcp.ThoughtFilter) ([]*agentsmcp.Thought, string, error) {
	q, ok, err := thoughtQuery(f)
	if err != nil || !ok {
		return []*agentsmcp.Thought{}, "", err
	}
	return findPage(ctx, db, q, f.Limit, "thoughts", scanThought, thoughtCursor,
		func(th *agentsmcp.Thought) cursor { return cursor{n: toMillis(th.CreatedAt), id: th.ID} })
}

// thoughtQuery builds the page query of f; ok is false when f can match
// nothing.
func thoughtQuery(f agentsmcp.ThoughtFilter) (q *listQuery, ok bool, err error) {
	q = &listQuery{columns: thoughtColumns, from: "thoughts t", keyN: "t.created_at", keyID: "t.id"}
	if f.Text != "" {
		match, ok := ftsQuery(f.Text)
		if !ok {
			return nil, false, nil
		}
		q.and("t.pk IN (SELECT rowid FROM thoughts_fts WHERE thoughts_fts MATCH ?)", match)
	}
	if f.Principal != "" {
		q.and("t.principal = ?", f.Principal)
	}
	if f.Cursor != "" {
		c, err := decodeCursor(thoughtCursor, f.Cursor)
		if err != nil {
			return nil, false, err
		}
		q.after(c)
	}
	return q, true, nil
}

func scanThought(row scanner) (*agentsmcp.Thought, error) {
	var (
		th                                                            agentsmcp.Thought
		subGoals, approaches, constraints, assumptions, uncertainties string
		recs                                                          string
		created                                                       int64
	)
	if err := row.Scan(&th.ID, &th.Principal, &th.Request, &subGoals, &th.Reasoning, &approaches, &constraints, &assumptions,
		&uncertainties, &th.Confidence, &recs, &created); err != nil {
		return nil, err
	}
	for _, p := range []struct {
		dst *[]string
		src string
	}{{&th.SubGoals, subGoals}, {&th.Approaches, approaches}, {&th.Constraints, constraints},
		{&th.Assumptions, assumptions}, {&th.Uncertainties, uncertainties}} {
		list, err := decodeList(p.src)
		if err != nil {
			return nil, err
		}
		*p.dst = list
	}
	var stored []storedRecommendation
	if err := json.Unmarshal([]byte(recs), &stored); err != nil {
		return nil, fmt.Errorf("decode recommended tools: %w", err)
	}
	th.RecommendedTools = make([]agentsmcp.ToolRecommendation, len(stored))
	for i, r := range stored {
		th.RecommendedTools[i] = agentsmcp.ToolRecommendation(r)
	}
	th.CreatedAt = fromMillis(created)
	return &th, nil
}

const planColumns = "p.id, p.thought_id, p.principal, p.request, p.goal, p.steps, p.inputs, p.created_at"

const insertPlanSQL = `INSERT INTO plans (id, thought_id, principal, request, goal, steps, inputs, created_at)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?)`

const findPlanByIDSQL = "SELECT " + planColumns + " FROM plans p WHERE p.id = ?"

// storedStep is the stored form of a PlanStep, an entry of plans.steps:
// Arguments is a JSON string holding the caller's bytes, so that they come
// back unchanged (a json.RawMessage inside a struct would be compacted and
// re-escaped). Its JSON names are part of the schema.
type storedStep struct {
	ID                string       `json:"id"`
	Tool              string       `json:"tool"`
	Arguments         string       `json:"arguments,omitempty"`
	DependsOn         []string     `json:"dependsOn,omitempty"`
	Retry             *storedRetry `json:"retry,omitempty"`
	TimeoutNs         int64        `json:"timeoutNs,omitempty"`
	NeedsConfirmation bool         `json:"needsConfirmation,omitempty"`
	Description       string       `json:"description,omitempty"`
}

type storedRetry struct {
	MaxAttempts      int   `json:"maxAttempts"`
	InitialBackoffNs int64 `json:"initialBackoffNs,omitempty"`
	MaxBackoffNs     int64 `json:"maxBackoffNs,omitempty"`
}

// CreatePlan implements [agentsmcp.PlanService]. On success p holds the
// stored ID and CreatedAt (UTC, at millisecond precision).
func (db *DB) CreatePlan(ctx context.Context, p *agentsmcp.Plan) error {
	if err := validate.Plan(p); err != nil {
		return err
	}
	id, created := p.ID, p.CreatedAt
	if id == "" {
		id = agentsmcp.NewID(agentsmcp.PlanIDPrefix)
	}
	if created.IsZero() {
		created = now()
	}
	steps := make([]storedStep, len(p.Steps))
	for i, s := range p.Steps {
		steps[i] = storedStep{
			ID: s.ID, Tool: s.Tool, Arguments: string(s.Arguments), DependsOn: s.DependsOn,
			TimeoutNs: int64(s.Timeout), NeedsConfirmation: s.NeedsConfirmation, Description: s.Description,
		}
		if r := s.Retry; r != nil {
			steps[i].Retry = &storedRetry{r.MaxAttempts, int64(r.InitialBackoff), int64(r.MaxBackoff)}
		}
	}
	stepsJSON, err := json.Marshal(steps)
	if err != nil {
		return fmt.Errorf("encode plan steps: %w", err)
	}
	createdMS := toMillis(created)
	err = db.write(ctx, func(tx *sql.Tx) error {
		_, err := db.txStmt(ctx, tx, insertPlanSQL).ExecContext(ctx,
			id, p.ThoughtID, p.Principal, p.Request, p.Goal, string(stepsJSON), string(p.Inputs), createdMS)
		if isUnique(err) {
			return agentsmcp.Errorf(agentsmcp.ECONFLICT, "plan %q already exists", id)
		} else if err != nil {
			return fmt.Errorf("insert plan: %w", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	p.ID, p.CreatedAt = id, fromMillis(createdMS)
	return nil
}

// FindPlanByID implements [agentsmcp.PlanService].
func (db *DB) FindPlanByID(ctx context.Context, id string) (*agentsmcp.Plan, error) {
	row, err := db.queryRow(ctx, findPlanByIDSQL, id)
	if err != nil {
		return nil, fmt.Errorf("find plan %q: %w", id, err)
	}
	p, err := scanPlan(row)
	if err != nil {
		return nil, notFound(err, "plan", id)
	}
	return p, nil
}

// FindPlans implements [agentsmcp.PlanService], reading the index
// (thought_id,) created_at, id backwards.
func (db *DB) FindPlans(ctx context.Context, f agentsmcp.PlanFilter) ([]*agentsmcp.Plan, string, error) {
	q, err := planQuery(f)
	if err != nil {
		return nil, "", err
	}
	return findPage(ctx, db, q, f.Limit, "plans", scanPlan, planCursor,
		func(p *agentsmcp.Plan) cursor { return cursor{n: toMillis(p.CreatedAt), id: p.ID} })
}

func planQuery(f agentsmcp.PlanFilter) (*listQuery, error) {
	q := &listQuery{columns: planColumns, from: "plans p", keyN: "p.created_at", keyID: "p.id"}
	switch {
	case f.ThoughtID != "" && f.Principal != "":
		q.and("p.thought_id = ?", f.ThoughtID)
		q.and("+p.principal = ?", f.Principal)
	case f.ThoughtID != "":
		q.and("p.thought_id = ?", f.ThoughtID)
	case f.Principal != "":
		q.and("p.principal = ?", f.Principal)
	}
	if f.Cursor != "" {
		c, err := decodeCursor(planCursor, f.Cursor)
		if err != nil {
			return nil, err
		}
		q.after(c)
	}
	return q, nil
}

func scanPlan(row scanner) (*agentsmcp.Plan, error) {
	var (
		p             agentsmcp.Plan
		steps, inputs string
		created       int64
		stored        []storedStep
	)
	if err := row.Scan(&p.ID, &p.ThoughtID, &p.Principal, &p.Request, &p.Goal, &steps, &inputs, &created); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(steps), &stored); err != nil {
		return nil, fmt.Errorf("decode plan steps: %w", err)
	}
	p.Steps = make([]agentsmcp.PlanStep, len(stored))
	for i, s := range stored {
		p.Steps[i] = agentsmcp.PlanStep{
			ID: s.ID, Tool: s.Tool, Arguments: rawOrNil(s.Arguments), DependsOn: s.DependsOn,
			Timeout: time.Duration(s.TimeoutNs), NeedsConfirmation: s.NeedsConfirmation, Description: s.Description,
		}
		if r := s.Retry; r != nil {
			p.Steps[i].Retry = &agentsmcp.RetryPolicy{MaxAttempts: r.MaxAttempts,
				InitialBackoff: time.Duration(r.InitialBackoffNs), MaxBackoff: time.Duration(r.MaxBackoffNs)}
		}
	}
	p.Inputs = rawOrNil(inputs)
	p.CreatedAt = fromMillis(created)
	return &p, nil
}

// findPage runs the page query q (limit rows, default and cap applied) and
// returns the items with the cursor of the next page; key gives an item's
// sort key as a cursor (created_at or another number, then id).
func findPage[T any](ctx context.Context, db *DB, q *listQuery, limit int, what string,
	scan func(scanner) (*T, error), kind string, key func(*T) cursor) ([]*T, string, error) {
	size := storedform.PageSize(limit)
	query, args := q.sql(size + 1)
	rows, err := db.query(ctx, query, args...)
	if err != nil {
		return nil, "", fmt.Errorf("find %s: %w", what, err)
	}
	defer rows.Close()
	items := []*T{}
	for rows.Next() {
		it, err := scan(rows)
		if err != nil {
			return nil, "", fmt.Errorf("find %s: %w", what, err)
		}
		items = append(items, it)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("find %s: %w", what, err)
	}
	var next string
	if len(items) > size {
		items = items[:size]
		next = encodeCursor(kind, key(items[size-1]))
	}
	return items, next, nil
}

// rawOrNil is the JSON of a stored text column: nil when empty.
func rawOrNil(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}
