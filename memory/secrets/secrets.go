// Package secrets keeps the secrets of the agents' data sealed at rest:
// the values a user gives a task (its inputs), what its steps returned
// (their outputs), and the literal values the planner put in a plan's step
// arguments. The executor needs them in clear
// to run a task, or to resume a paused one, possibly on another replica
// after a restart; nobody else needs them.
//
// [Tasks], [Plans] and [Thoughts] wrap a store's services. On the way in,
// every value that may hold a secret ([redact.EditSecrets]: the value
// of a secret-looking name such as api_key or password, and every string
// in which [redact.HasSecret] finds one) is sealed by a [Sealer]; on the
// way out it is opened, so that the executor sees the values it was given.
// Free texts (requests, goals, descriptions, a thought's texts) are stored
// through [redact.Text]: nothing runs from them.
//
// A Sealer with a key encrypts each value with AES-256-GCM (a random nonce
// per value) into a string "agents-mcp:sealed:v1:<base64url>", which holds
// the value's JSON. A Sealer without a key (see [Redacting]) stores
// [redact.Marker] instead: the value is lost, and a paused task whose
// inputs held it asks for them again. Values that cannot be opened (the key
// changed, the bytes were altered) are read as redacted.
//
// Views shown to people go through [agentsmcp.Task.Redacted] and its
// kin whatever the store holds.
package secrets

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/redact"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
	"github.com/agents-mcp/agents-mcp/internal/view"
)

// KeySize is the size of a Sealer's key: AES-256.
const KeySize = 32

// sealedPrefix starts the string that stands for a sealed value.
const sealedPrefix = "agents-mcp:sealed:v1:"

// Sealer seals and opens secret values. The zero Sealer, like
// [Redacting], redacts.
type Sealer struct {
	aead cipher.AEAD
}

// New returns a Sealer that encrypts with key (KeySize bytes).
func New(key []byte) (*Sealer, error) {
	if len(key) != KeySize {
		return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "the secrets key is %d bytes; it must be %d", len(key), KeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("secrets key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secrets key: %w", err)
	}
	return &Sealer{aead: aead}, nil
}

// Redacting returns a Sealer without a key: it stores secret values as
// [redact.Marker], losing them.
func Redacting() *Sealer { return &Sealer{} }

// Encrypts reports whether s keeps the values (true) or redacts them.
func (s *Sealer) Encrypts() bool { return s != nil && s.aead != nil }

// Seal returns the JSON value raw with its secret values sealed: for a
// name that looks secret, its value whatever its type; elsewhere, the
// strings that hold a secret. Values sealed already stay as they are.
func (s *Sealer) Seal(raw json.RawMessage) (json.RawMessage, error) {
	out, err := s.sealValues(raw)
	if inv := (*redact.InvalidError)(nil); errors.As(err, &inv) {
		return out, agentsmcp.Errorf(agentsmcp.EINVALID, "%s", inv.Msg)
	}
	return out, err
}

func (s *Sealer) sealValues(raw json.RawMessage) (json.RawMessage, error) {
	return redact.EditSecrets(raw, func(v json.RawMessage, named bool) (json.RawMessage, error) {
		var str string
		isString := json.Unmarshal(v, &str) == nil && len(v) > 0 && v[0] == '"'
		switch {
		case isString && (strings.HasPrefix(str, sealedPrefix) || str == redact.Marker):
			return nil, nil
		case !named && (!isString || !redact.HasSecret(str)):
			return nil, nil
		}
		return s.seal(v)
	})
}

func (s *Sealer) seal(v json.RawMessage) (json.RawMessage, error) {
	if !s.Encrypts() {
		return quote(redact.Marker), nil
	}
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	out := s.aead.Seal(nonce, nonce, bytes.TrimSpace(v), nil)
	return quote(sealedPrefix + base64.RawURLEncoding.EncodeToString(out)), nil
}

// Open returns raw with its sealed values opened. A value that cannot be
// opened (no key, another key, altered bytes) becomes
// [redact.Marker]; opened reports whether every one was.
func (s *Sealer) Open(raw json.RawMessage) (out json.RawMessage, opened bool) {
	opened = true
	out, err := redact.EditSecrets(raw, func(v json.RawMessage, _ bool) (json.RawMessage, error) {
		var str string
		if len(v) == 0 || v[0] != '"' || json.Unmarshal(v, &str) != nil || !strings.HasPrefix(str, sealedPrefix) {
			return nil, nil
		}
		plain, ok := s.open(strings.TrimPrefix(str, sealedPrefix))
		if !ok {
			opened = false
			return quote(redact.Marker), nil
		}
		return plain, nil
	})
	if err != nil {
		return raw, opened // not JSON: stored as given
	}
	return out, opened
}

func (s *Sealer) open(b64 string) (json.RawMessage, bool) {
	if !s.Encrypts() {
		return nil, false
	}
	b, err := base64.RawURLEncoding.DecodeString(b64)
	if err != nil || len(b) < s.aead.NonceSize() {
		return nil, false
	}
	plain, err := s.aead.Open(nil, b[:s.aead.NonceSize()], b[s.aead.NonceSize():], nil)
	if err != nil || !json.Valid(plain) {
		return nil, false
	}
	return plain, true
}

// openInputs opens a task's inputs and drops the values that were
// redacted (or cannot be opened): the task then asks for them again,
// rather than running with [redact.Marker] as a value.
func (s *Sealer) openInputs(raw json.RawMessage) json.RawMessage {
	out, _ := s.Open(raw)
	if !bytes.Contains(out, []byte(redact.Marker)) {
		return out
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(out, &m) != nil {
		return out
	}
	dropped := false
	for k, v := range m {
		var str string
		if json.Unmarshal(v, &str) == nil && str == redact.Marker && redact.IsSecretName(k) {
			delete(m, k)
			dropped = true
		}
	}
	if !dropped {
		return out
	}
	b, err := json.Marshal(m)
	if err != nil {
		return out
	}
	return b
}

// textWithin is text cut to max bytes, for the fields whose size the
// store checks: a redaction mark may be longer than what it replaced.
func textWithin(s string, limit int) string {
	if s == "" || !redact.HasSecret(s) {
		return s
	}
	return redact.Text(s, max(limit, 0))
}

// text is how a free text is stored: without what redact.Text finds.
func text(s string) string {
	if s == "" || !redact.HasSecret(s) {
		return s
	}
	return redact.Text(s, 2*len(s)+64)
}

func quote(s string) json.RawMessage {
	b, _ := json.Marshal(s) // strings cannot fail
	return b
}

// Tasks is a TaskService that keeps the secrets of tasks sealed in the
// TaskService it wraps: inputs and step outputs sealed, the request,
// errors and history redacted.
type Tasks struct {
	agentsmcp.TaskService
	Sealer *Sealer
}

var (
	_ agentsmcp.TaskService     = (*Tasks)(nil)
	_ agentsmcp.TaskStepUpdater = (*Tasks)(nil)
)

// sealed returns the copy of t that is stored: inputs and step outputs
// sealed (a later step, on any replica, may read an output back), the
// request, errors and history redacted (nothing runs from them).
func (w *Tasks) sealed(t *agentsmcp.Task) (*agentsmcp.Task, error) {
	if t == nil {
		return nil, nil
	}
	return w.sealedChange(t, nil, len(t.History))
}

// sealedChange is sealed for a write of the step states at the positions
// steps (all of them when steps is nil) and of the newest events of t's
// history: only those are sealed and redacted, the others are copied as
// they are (the store does not write them).
func (w *Tasks) sealedChange(t *agentsmcp.Task, steps []int, events int) (*agentsmcp.Task, error) {
	if t == nil {
		return nil, nil
	}
	c := *t
	c.Request = text(t.Request)
	c.Error = textWithin(t.Error, agentsmcp.MaxTaskErrorBytes)
	inputs, err := w.Sealer.Seal(t.Inputs)
	if err != nil {
		return nil, err
	}
	c.Inputs = inputs
	c.Steps = slices.Clone(t.Steps)
	if steps == nil {
		steps = make([]int, len(c.Steps))
		for i := range steps {
			steps[i] = i
		}
	}
	for _, i := range steps {
		if i < 0 || i >= len(c.Steps) {
			continue // the store refuses the change
		}
		s := &c.Steps[i]
		s.Error = textWithin(s.Error, agentsmcp.MaxTaskErrorBytes)
		if len(s.RepairedArguments) > 0 {
			// Like a plan step's arguments: what the repair took from the
			// request may be a secret.
			args, err := w.Sealer.Seal(s.RepairedArguments)
			if err != nil {
				return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "task step %s repaired arguments: %s", s.StepID, agentsmcp.ErrorMessage(err))
			}
			s.RepairedArguments = args
		}
		if len(s.Output) == 0 {
			continue
		}
		out, err := w.Sealer.Seal(s.Output)
		if err != nil {
			return nil, err
		}
		if len(out) > agentsmcp.MaxStepOutputBytes {
			// Sealing grew it past the limit: what the store may hold is
			// the output with its secrets redacted.
			out = redact.Arguments(s.Output)
		}
		s.Output = out
	}
	c.History = slices.Clone(t.History)
	for i := max(len(c.History)-events, 0); i < len(c.History); i++ {
		e := &c.History[i]
		e.Message = textWithin(e.Message, agentsmcp.MaxTaskEventBytes-len(e.Type)-len(e.StepID))
	}
	return &c, nil
}

func (w *Tasks) opened(t *agentsmcp.Task) *agentsmcp.Task {
	if t == nil {
		return t
	}
	t.Inputs = w.Sealer.openInputs(t.Inputs)
	for i := range t.Steps {
		if len(t.Steps[i].Output) > 0 {
			t.Steps[i].Output, _ = w.Sealer.Open(t.Steps[i].Output)
		}
		if len(t.Steps[i].RepairedArguments) > 0 {
			t.Steps[i].RepairedArguments, _ = w.Sealer.Open(t.Steps[i].RepairedArguments)
		}
	}
	return t
}

// CreateTask implements [agentsmcp.TaskService]; t keeps its clear values.
func (w *Tasks) CreateTask(ctx context.Context, t *agentsmcp.Task) error {
	c, err := w.sealed(t)
	if err != nil {
		return err
	}
	if err := w.TaskService.CreateTask(ctx, c); err != nil {
		return err
	}
	t.ID, t.Status, t.History, t.Lease, t.Version = c.ID, c.Status, c.History, c.Lease, c.Version
	t.CreatedAt, t.UpdatedAt = c.CreatedAt, c.UpdatedAt
	return nil
}

// UpdateTask implements [agentsmcp.TaskService]; t keeps its clear values.
func (w *Tasks) UpdateTask(ctx context.Context, t *agentsmcp.Task) error {
	c, err := w.sealed(t)
	if err != nil {
		return err
	}
	if err := w.TaskService.UpdateTask(ctx, c); err != nil {
		return err
	}
	t.Version, t.UpdatedAt, t.History = c.Version, c.UpdatedAt, c.History
	return nil
}

// UpdateTaskSteps implements [agentsmcp.TaskStepUpdater], with UpdateTask
// when the wrapped store has no UpdateTaskSteps; t keeps its clear values.
func (w *Tasks) UpdateTaskSteps(ctx context.Context, t *agentsmcp.Task, ch agentsmcp.TaskChange) error {
	if ch.Steps == nil {
		ch.Steps = []int{} // sealedChange reads nil as every step; the change names none
	}
	c, err := w.sealedChange(t, ch.Steps, ch.Events)
	if err != nil {
		return err
	}
	if err := storedform.UpdateTaskSteps(ctx, w.TaskService, c, ch); err != nil {
		return err
	}
	t.Version, t.UpdatedAt, t.History = c.Version, c.UpdatedAt, c.History
	return nil
}

// FindTaskByID implements [agentsmcp.TaskService].
func (w *Tasks) FindTaskByID(ctx context.Context, id string) (*agentsmcp.Task, error) {
	t, err := w.TaskService.FindTaskByID(ctx, id)
	return w.opened(t), err
}

// FindTasks implements [agentsmcp.TaskService].
func (w *Tasks) FindTasks(ctx context.Context, f agentsmcp.TaskFilter) ([]*agentsmcp.Task, string, error) {
	items, next, err := w.TaskService.FindTasks(ctx, f)
	for _, t := range items {
		w.opened(t)
	}
	return items, next, err
}

// AcquireTaskLease implements [agentsmcp.TaskService].
func (w *Tasks) AcquireTaskLease(ctx context.Context, id, owner string, ttl time.Duration) (*agentsmcp.Task, error) {
	t, err := w.TaskService.AcquireTaskLease(ctx, id, owner, ttl)
	return w.opened(t), err
}

// FindTasksToResume implements [agentsmcp.TaskService].
func (w *Tasks) FindTasksToResume(ctx context.Context, now time.Time, limit int) ([]*agentsmcp.Task, error) {
	items, err := w.TaskService.FindTasksToResume(ctx, now, limit)
	for _, t := range items {
		w.opened(t)
	}
	return items, err
}

// Plans is a PlanService that keeps the secrets of plans sealed in the
// PlanService it wraps: step arguments sealed, texts redacted.
type Plans struct {
	agentsmcp.PlanService
	Sealer *Sealer
}

var _ agentsmcp.PlanService = (*Plans)(nil)

// CreatePlan implements [agentsmcp.PlanService]; p keeps its clear values.
func (w *Plans) CreatePlan(ctx context.Context, p *agentsmcp.Plan) error {
	if p == nil {
		return w.PlanService.CreatePlan(ctx, p)
	}
	c := *p
	c.Request, c.Goal = text(p.Request), text(p.Goal)
	c.Steps = slices.Clone(p.Steps)
	for i := range c.Steps {
		args, err := w.Sealer.Seal(c.Steps[i].Arguments)
		if err != nil {
			return agentsmcp.Errorf(agentsmcp.EINVALID, "plan step %s arguments: %s", c.Steps[i].ID, agentsmcp.ErrorMessage(err))
		}
		c.Steps[i].Arguments = args
		c.Steps[i].Description = text(c.Steps[i].Description)
	}
	if err := w.PlanService.CreatePlan(ctx, &c); err != nil {
		return err
	}
	p.ID, p.CreatedAt = c.ID, c.CreatedAt
	return nil
}

func (w *Plans) opened(p *agentsmcp.Plan) *agentsmcp.Plan {
	if p == nil {
		return nil
	}
	for i := range p.Steps {
		p.Steps[i].Arguments, _ = w.Sealer.Open(p.Steps[i].Arguments)
	}
	return p
}

// FindPlanByID implements [agentsmcp.PlanService].
func (w *Plans) FindPlanByID(ctx context.Context, id string) (*agentsmcp.Plan, error) {
	p, err := w.PlanService.FindPlanByID(ctx, id)
	return w.opened(p), err
}

// FindPlans implements [agentsmcp.PlanService].
func (w *Plans) FindPlans(ctx context.Context, f agentsmcp.PlanFilter) ([]*agentsmcp.Plan, string, error) {
	items, next, err := w.PlanService.FindPlans(ctx, f)
	for _, p := range items {
		w.opened(p)
	}
	return items, next, err
}

// Thoughts is a ThoughtService that stores thoughts with their texts
// redacted: nothing runs from a thought, so nothing is sealed.
type Thoughts struct {
	agentsmcp.ThoughtService
}

var _ agentsmcp.ThoughtService = (*Thoughts)(nil)

// CreateThought implements [agentsmcp.ThoughtService]; th keeps its texts.
func (w *Thoughts) CreateThought(ctx context.Context, th *agentsmcp.Thought) error {
	if th == nil {
		return w.ThoughtService.CreateThought(ctx, th)
	}
	c := *th
	view.RedactThought(&c)
	if err := w.ThoughtService.CreateThought(ctx, &c); err != nil {
		return err
	}
	th.ID, th.CreatedAt = c.ID, c.CreatedAt
	return nil
}

// Insights is an InsightService that stores insights with their text
// redacted: an insight is shared knowledge, returned to every reader of the
// memory it belongs to (query_memory, the admin API, the next plans), so a
// secret that a caller, or a task's step, wrote into one is not kept.
type Insights struct {
	agentsmcp.InsightService
}

var _ agentsmcp.InsightService = (*Insights)(nil)

// CreateInsight implements [agentsmcp.InsightService]; in gets the stored
// text, as every later read returns it.
func (w *Insights) CreateInsight(ctx context.Context, in *agentsmcp.Insight) error {
	if in == nil {
		return w.InsightService.CreateInsight(ctx, in)
	}
	c := *in
	c.Text = textWithin(in.Text, agentsmcp.MaxInsightTextBytes)
	if err := w.InsightService.CreateInsight(ctx, &c); err != nil {
		return err
	}
	in.ID, in.CreatedAt, in.Text = c.ID, c.CreatedAt, c.Text
	return nil
}
