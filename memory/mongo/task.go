package mongo

import (
	"context"
	"errors"
	"strconv"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
	"github.com/agents-mcp/agents-mcp/internal/validate"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Tasks change only by conditional updates of one document: UpdateTask
// matches the version read, the lease methods the lease's owner and
// expiry. On MongoDB each is atomic across replicas. On FerretDB, which
// applies an update as read, modify, write, they are serialised per task
// within this process only (see DB.lockKey): FerretDB is a test server.
// Lease expiry is judged by the clock of the replica that asks, so
// replicas need synchronised clocks (NTP), and a ttl well above their skew.

// taskDoc is the stored form of a Task. A free lease is leaseOwner "" and
// leaseExpires the Unix epoch, so "free or expired at t" is one range
// condition, leaseExpires <= t. Unset times (endedAt, a step's startedAt
// and endedAt) are absent. JSON the caller gave (inputs, step outputs) is
// kept as strings.
type taskDoc struct {
	ID           string         `bson:"_id"`
	PlanID       string         `bson:"planId"`
	Principal    string         `bson:"principal"` // absent before schema version 5: ""
	Tools        []string       `bson:"principalTools,omitempty"`
	Request      string         `bson:"request"`
	Status       string         `bson:"status"`
	Steps        []stepStateDoc `bson:"steps"`
	Inputs       string         `bson:"inputs"`
	History      []eventDoc     `bson:"history"`
	Error        string         `bson:"error"`
	ErrorCode    string         `bson:"errorCode,omitempty"` // absent unless the executor failed the task
	LeaseOwner   string         `bson:"leaseOwner"`
	LeaseExpires time.Time      `bson:"leaseExpires"`
	Version      int64          `bson:"version"`
	CreatedAt    time.Time      `bson:"createdAt"`
	UpdatedAt    time.Time      `bson:"updatedAt"`
	EndedAt      time.Time      `bson:"endedAt,omitempty"`
	// Bytes is the task's StoredBytes as last stored, for the quotas
	// (usage.go).
	Bytes int64 `bson:"bytes"`
}

type stepStateDoc struct {
	StepID    string `bson:"stepId"`
	Status    string `bson:"status"`
	Attempts  int64  `bson:"attempts"`
	Output    string `bson:"output,omitempty"`
	Error     string `bson:"error,omitempty"`
	Confirmed bool   `bson:"confirmed,omitempty"`
	Asks      int64  `bson:"asks,omitempty"` // absent for a step never asked
	// Absent for a step never repaired.
	RepairedTool      string    `bson:"repairedTool,omitempty"`
	RepairedArguments string    `bson:"repairedArguments,omitempty"`
	StartedAt         time.Time `bson:"startedAt,omitempty"`
	EndedAt           time.Time `bson:"endedAt,omitempty"`
}

type eventDoc struct {
	At      time.Time `bson:"at"`
	Type    string    `bson:"type"`
	StepID  string    `bson:"stepId,omitempty"`
	Message string    `bson:"message,omitempty"`
}

// freeLease is the leaseExpires of a free lease.
var freeLease = time.Unix(0, 0).UTC()

func (d *taskDoc) task() *agentsmcp.Task {
	t := &agentsmcp.Task{
		ID:        d.ID,
		PlanID:    d.PlanID,
		Principal: d.Principal,
		Request:   d.Request,
		Status:    agentsmcp.TaskStatus(d.Status),
		Steps:     make([]agentsmcp.StepState, len(d.Steps)),
		Inputs:    rawOrNil(d.Inputs),
		History:   make([]agentsmcp.TaskEvent, len(d.History)),
		Error:     d.Error,
		ErrorCode: d.ErrorCode,
		Version:   d.Version,
		CreatedAt: d.CreatedAt.UTC(),
		UpdatedAt: d.UpdatedAt.UTC(),
		EndedAt:   utcOrZero(d.EndedAt),
	}
	if len(d.Tools) > 0 {
		t.PrincipalTools = d.Tools
	}
	if d.LeaseOwner != "" {
		t.Lease = agentsmcp.TaskLease{Owner: d.LeaseOwner, ExpiresAt: d.LeaseExpires.UTC()}
	}
	for i, s := range d.Steps {
		t.Steps[i] = agentsmcp.StepState{
			StepID: s.StepID, Status: agentsmcp.StepStatus(s.Status), Attempts: int(s.Attempts), Output: rawOrNil(s.Output),
			Error: s.Error, Confirmed: s.Confirmed, Asks: int(s.Asks), RepairedTool: s.RepairedTool, RepairedArguments: rawOrNil(s.RepairedArguments),
			StartedAt: utcOrZero(s.StartedAt), EndedAt: utcOrZero(s.EndedAt),
		}
	}
	for i, e := range d.History {
		t.History[i] = agentsmcp.TaskEvent{At: utcOrZero(e.At), Type: e.Type, StepID: e.StepID, Message: e.Message}
	}
	return t
}

// utcOrZero is t in UTC, or the zero time for a zero (absent) t.
func utcOrZero(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}

// msOrZero is ms(t), keeping the zero time zero (so omitempty leaves it
// out).
func msOrZero(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return ms(t)
}

// taskState is what a create or an update writes of t: the fields every
// UpdateTask replaces, and the history it stores (trimmed).
func taskState(t *agentsmcp.Task) (steps []stepStateDoc, history []eventDoc, trimmed []agentsmcp.TaskEvent) {
	steps = make([]stepStateDoc, len(t.Steps))
	for i, s := range t.Steps {
		steps[i] = stepStateDoc{
			StepID: s.StepID, Status: string(s.Status), Attempts: int64(s.Attempts), Output: string(s.Output),
			Error: s.Error, Confirmed: s.Confirmed, Asks: int64(s.Asks), RepairedTool: s.RepairedTool, RepairedArguments: string(s.RepairedArguments),
			StartedAt: msOrZero(s.StartedAt), EndedAt: msOrZero(s.EndedAt),
		}
	}
	trimmed = storedform.TrimHistory(t.History)
	history = make([]eventDoc, len(trimmed))
	for i, e := range trimmed {
		history[i] = eventDoc{At: msOrZero(e.At), Type: e.Type, StepID: e.StepID, Message: e.Message}
	}
	return steps, history, trimmed
}

// CreateTask validates t, assigns ID, CreatedAt and Status when empty, and
// inserts it with Version 1 and t.Lease; see [agentsmcp.TaskService].
func (db *DB) CreateTask(ctx context.Context, t *agentsmcp.Task) error {
	if err := validate.Task(t); err != nil {
		return err
	}
	steps, history, trimmed := taskState(t)
	d := taskDoc{
		ID: t.ID, PlanID: t.PlanID, Principal: t.Principal, Tools: t.PrincipalTools, Request: t.Request, Status: string(t.Status),
		Steps: steps, Inputs: string(t.Inputs), History: history, Error: t.Error, ErrorCode: t.ErrorCode,
		LeaseExpires: freeLease, Version: 1, CreatedAt: ms(t.CreatedAt), EndedAt: msOrZero(t.EndedAt),
		Bytes: storedform.TaskBytes(t),
	}
	if d.ID == "" {
		d.ID = agentsmcp.NewID(agentsmcp.TaskIDPrefix)
	}
	if t.CreatedAt.IsZero() {
		d.CreatedAt = db.nowMs()
	}
	if d.Status == "" {
		d.Status = string(agentsmcp.TaskPending)
	}
	lease := agentsmcp.TaskLease{}
	if t.Lease.Owner != "" {
		d.LeaseOwner, d.LeaseExpires = t.Lease.Owner, ms(t.Lease.ExpiresAt)
		lease = agentsmcp.TaskLease{Owner: d.LeaseOwner, ExpiresAt: d.LeaseExpires}
	}
	d.UpdatedAt = d.CreatedAt
	if _, err := db.db.Collection(colTasks).InsertOne(ctx, &d); err != nil {
		return wrap(err, "task "+d.ID)
	}
	t.ID, t.Status, t.History, t.Lease, t.Version = d.ID, agentsmcp.TaskStatus(d.Status), trimmed, lease, 1
	t.CreatedAt, t.UpdatedAt = d.CreatedAt, d.UpdatedAt
	return nil
}

// FindTaskByID returns ENOTFOUND for an unknown id.
func (db *DB) FindTaskByID(ctx context.Context, id string) (*agentsmcp.Task, error) {
	var d taskDoc
	if err := db.db.Collection(colTasks).FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&d); err != nil {
		return nil, wrap(err, "task "+id)
	}
	return d.task(), nil
}

// FindTasks lists tasks matching f, newest first by CreatedAt (ties by id,
// highest first). EINVALID for a cursor that does not parse.
func (db *DB) FindTasks(ctx context.Context, f agentsmcp.TaskFilter) ([]*agentsmcp.Task, string, error) {
	var clauses []bson.D
	if f.Status != "" {
		clauses = append(clauses, bson.D{{Key: "status", Value: string(f.Status)}})
	}
	if f.PlanID != "" {
		clauses = append(clauses, bson.D{{Key: "planId", Value: f.PlanID}})
	}
	if f.Principal != "" {
		clauses = append(clauses, bson.D{{Key: "principal", Value: f.Principal}})
	}
	docs, next, err := newestFirstPage(ctx, db.db.Collection(colTasks), agentsmcp.TaskIDPrefix, clauses, "", f.Cursor, f.Limit,
		func(d *taskDoc) (time.Time, string) { return d.CreatedAt, d.ID })
	if err != nil {
		return nil, "", err
	}
	items := make([]*agentsmcp.Task, len(docs))
	for i := range docs {
		items[i] = docs[i].task()
	}
	return items, next, nil
}

// UpdateTask stores t provided the stored version is t.Version, in one
// updateOne whose filter holds the version: a compare-and-set. When it
// matches nothing, a read by id tells ENOTFOUND from ECONFLICT. See
// [agentsmcp.TaskService].
func (db *DB) UpdateTask(ctx context.Context, t *agentsmcp.Task) error {
	if err := validate.TaskUpdate(t); err != nil {
		return err
	}
	steps, history, trimmed := taskState(t)
	err := db.updateTask(ctx, t, bson.D{{Key: "steps", Value: steps}, {Key: "history", Value: history}}, nil)
	if err != nil {
		return err
	}
	t.History = trimmed
	return nil
}

// TasksVerbatim implements [agentsmcp.VerbatimTaskStore]: a task is read
// back as written, in the stored form of the stores (taskDoc.task).
func (db *DB) TasksVerbatim() bool { return true }

// UpdateTaskSteps implements [agentsmcp.TaskStepUpdater] with the same
// updateOne as UpdateTask, whose $set names the changed step states by
// position (steps.<i>) and whose $push appends the new events, so that the
// rest of the document is not sent. See [agentsmcp.TaskService].
func (db *DB) UpdateTaskSteps(ctx context.Context, t *agentsmcp.Task, c agentsmcp.TaskChange) error {
	if err := validate.TaskChange(t, c); err != nil {
		return err
	}
	var set bson.D
	for _, i := range c.Steps {
		s := t.Steps[i]
		set = append(set, bson.E{Key: "steps." + strconv.Itoa(i), Value: stepStateDoc{
			StepID: s.StepID, Status: string(s.Status), Attempts: int64(s.Attempts), Output: string(s.Output),
			Error: s.Error, Confirmed: s.Confirmed, Asks: int64(s.Asks), RepairedTool: s.RepairedTool, RepairedArguments: string(s.RepairedArguments),
			StartedAt: msOrZero(s.StartedAt), EndedAt: msOrZero(s.EndedAt),
		}})
	}
	var push bson.D
	if c.Events > 0 {
		events := make(bson.A, 0, c.Events)
		for _, e := range t.History[len(t.History)-c.Events:] {
			events = append(events, eventDoc{At: msOrZero(e.At), Type: e.Type, StepID: e.StepID, Message: e.Message})
		}
		push = bson.D{{Key: "history", Value: bson.D{{Key: "$each", Value: events}}}}
	}
	return db.updateTask(ctx, t, set, push)
}

// updateTask is the compare-and-set of UpdateTask and UpdateTaskSteps: it
// sets the task's own fields and set, pushes push, and on success sets
// t's Version and UpdatedAt.
func (db *DB) updateTask(ctx context.Context, t *agentsmcp.Task, parts, push bson.D) error {
	updated := db.nowMs()
	set := append(bson.D{
		{Key: "planId", Value: t.PlanID},
		{Key: "request", Value: t.Request},
		{Key: "status", Value: string(t.Status)},
		{Key: "inputs", Value: string(t.Inputs)},
		{Key: "error", Value: t.Error},
		{Key: "updatedAt", Value: updated},
		{Key: "bytes", Value: storedform.TaskBytes(t)},
	}, parts...)
	update := bson.D{{Key: "$inc", Value: bson.D{{Key: "version", Value: int64(1)}}}}
	var unset bson.D
	if t.EndedAt.IsZero() {
		unset = append(unset, bson.E{Key: "endedAt", Value: ""})
	} else {
		set = append(set, bson.E{Key: "endedAt", Value: ms(t.EndedAt)})
	}
	if t.ErrorCode == "" {
		unset = append(unset, bson.E{Key: "errorCode", Value: ""})
	} else {
		set = append(set, bson.E{Key: "errorCode", Value: t.ErrorCode})
	}
	if len(unset) > 0 {
		update = append(update, bson.E{Key: "$unset", Value: unset})
	}
	update = append(update, bson.E{Key: "$set", Value: set})
	if len(push) > 0 {
		update = append(update, bson.E{Key: "$push", Value: push})
	}
	defer db.lockKey(colTasks + "\x00" + t.ID)()
	res, err := db.db.Collection(colTasks).UpdateOne(ctx,
		bson.D{{Key: "_id", Value: t.ID}, {Key: "version", Value: t.Version}}, update)
	if err != nil {
		return wrap(err, "update task "+t.ID)
	}
	if res.MatchedCount == 0 {
		if err := db.taskExists(ctx, t.ID); err != nil {
			return err
		}
		return agentsmcp.Errorf(agentsmcp.ECONFLICT, "task %s changed since version %d was read", t.ID, t.Version)
	}
	t.Version++
	t.UpdatedAt = updated
	return nil
}

// taskExists returns nil when task id exists, ENOTFOUND when it does not.
func (db *DB) taskExists(ctx context.Context, id string) error {
	err := db.db.Collection(colTasks).FindOne(ctx, bson.D{{Key: "_id", Value: id}},
		options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}})).Err()
	return wrap(err, "task "+id)
}

// AcquireTaskLease takes the lease in one findOneAndUpdate whose filter
// says the lease is free, expired or owner's: [agentsmcp.TaskService].
func (db *DB) AcquireTaskLease(ctx context.Context, id, owner string, ttl time.Duration) (*agentsmcp.Task, error) {
	if err := validate.Lease(owner, ttl); err != nil {
		return nil, err
	}
	defer db.lockKey(colTasks + "\x00" + id)()
	now := db.nowMs()
	filter := bson.D{
		{Key: "_id", Value: id},
		{Key: "$or", Value: bson.A{
			bson.D{{Key: "leaseOwner", Value: ""}},
			bson.D{{Key: "leaseExpires", Value: bson.D{{Key: "$lte", Value: now}}}},
			bson.D{{Key: "leaseOwner", Value: owner}},
		}},
	}
	update := bson.D{{Key: "$set", Value: bson.D{
		{Key: "leaseOwner", Value: owner},
		{Key: "leaseExpires", Value: now.Add(ttl.Truncate(time.Millisecond))},
	}}}
	var d taskDoc
	err := db.db.Collection(colTasks).FindOneAndUpdate(ctx, filter, update,
		options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		if err := db.taskExists(ctx, id); err != nil {
			return nil, err
		}
		return nil, agentsmcp.Errorf(agentsmcp.ECONFLICT, "the lease of task %s is held by another owner", id)
	} else if err != nil {
		return nil, wrap(err, "acquire lease of task "+id)
	}
	return d.task(), nil
}

// ReleaseTaskLease frees the lease if owner holds it, in one conditional
// updateOne; see [agentsmcp.TaskService].
func (db *DB) ReleaseTaskLease(ctx context.Context, id, owner string) error {
	defer db.lockKey(colTasks + "\x00" + id)()
	res, err := db.db.Collection(colTasks).UpdateOne(ctx,
		bson.D{{Key: "_id", Value: id}, {Key: "leaseOwner", Value: owner}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "leaseOwner", Value: ""}, {Key: "leaseExpires", Value: freeLease}}}})
	if err != nil {
		return wrap(err, "release lease of task "+id)
	}
	if res.MatchedCount == 0 {
		return db.taskExists(ctx, id) // not held by owner: nothing to do
	}
	return nil
}

// resumeOrder is the order of FindTasksToResume: oldest first.
var resumeOrder = bson.D{{Key: "createdAt", Value: 1}, {Key: "_id", Value: 1}}

// FindTasksToResume returns pending and running tasks whose lease is free
// or expired at now, oldest first; see [agentsmcp.TaskService].
func (db *DB) FindTasksToResume(ctx context.Context, now time.Time, limit int) ([]*agentsmcp.Task, error) {
	filter := bson.D{
		{Key: "status", Value: bson.D{{Key: "$in", Value: bson.A{string(agentsmcp.TaskPending), string(agentsmcp.TaskRunning)}}}},
		{Key: "leaseExpires", Value: bson.D{{Key: "$lte", Value: ms(now)}}},
	}
	cur, err := db.db.Collection(colTasks).Find(ctx, filter,
		options.Find().SetSort(resumeOrder).SetLimit(int64(storedform.PageSize(limit))))
	if err != nil {
		return nil, wrap(err, "find tasks to resume")
	}
	var docs []taskDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, wrap(err, "find tasks to resume")
	}
	items := make([]*agentsmcp.Task, len(docs))
	for i := range docs {
		items[i] = docs[i].task()
	}
	return items, nil
}

// DeleteEndedTasks implements [agentsmcp.TaskService]: it reads the ids of
// one batch through the endedAt_id index, then deletes them with the same
// filter repeated, so that a task changed in between is deleted only if it
// still qualifies. deleteMany alone takes no limit.
func (db *DB) DeleteEndedTasks(ctx context.Context, endedBefore time.Time, limit int) (int64, error) {
	filter := bson.D{
		{Key: "status", Value: bson.D{{Key: "$in", Value: bson.A{
			string(agentsmcp.TaskSucceeded), string(agentsmcp.TaskFailed), string(agentsmcp.TaskCancelled)}}}},
		{Key: "endedAt", Value: bson.D{{Key: "$lt", Value: ceilMs(endedBefore)}}},
	}
	cur, err := db.db.Collection(colTasks).Find(ctx, filter, options.Find().
		SetSort(bson.D{{Key: "endedAt", Value: 1}, {Key: "_id", Value: 1}}).
		SetLimit(int64(storedform.PageSize(limit))).
		SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return 0, wrap(err, "delete ended tasks")
	}
	var docs []struct {
		ID string `bson:"_id"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return 0, wrap(err, "delete ended tasks")
	}
	if len(docs) == 0 {
		return 0, nil
	}
	ids := make(bson.A, len(docs))
	for i, d := range docs {
		ids[i] = d.ID
	}
	res, err := db.db.Collection(colTasks).DeleteMany(ctx, append(filter, bson.E{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}))
	if err != nil {
		return 0, wrap(err, "delete ended tasks")
	}
	return res.DeletedCount, nil
}
