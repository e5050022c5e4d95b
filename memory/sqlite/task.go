package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
	"github.com/agents-mcp/agents-mcp/internal/validate"
)

// taskColumnsOf are the columns of a task as read, in scanTask's order,
// of the tasks row named table: the step states and the history are put
// back together from task_steps and task_events as the JSON arrays that
// tasks.steps and tasks.history held before migration 0013.
func taskColumnsOf(table string) string {
	return strings.NewReplacer("T.", table+".").Replace(`T.id, T.plan_id, T.principal, T.principal_tools, T.request, T.status,
		(SELECT '[' || coalesce(group_concat(s.state, ',' ORDER BY s.idx), '') || ']' FROM task_steps s WHERE s.task_pk = T.pk),
		T.inputs,
		(SELECT '[' || coalesce(group_concat(substr(e.events, 2, length(e.events) - 2), ',' ORDER BY e.seq), '') || ']' FROM task_events e WHERE e.task_pk = T.pk),
		T.error, T.error_code, T.lease_owner, T.lease_expires, T.version, T.created_at, T.updated_at, T.ended_at`)
}

// taskColumns are the columns of a task of the alias t.
var taskColumns = taskColumnsOf("t")

const (
	// insertTaskSQL inserts the row of a task; its step states and events
	// follow (upsertTaskStepsSQL, insertTaskEventsSQL).
	insertTaskSQL = `INSERT INTO tasks
		(id, plan_id, principal, principal_tools, request, status, steps, inputs, history, error, error_code, lease_owner, lease_expires, version, created_at, updated_at, ended_at, bytes)
		VALUES (?, ?, ?, ?, ?, ?, '', ?, '', ?, ?, ?, ?, 1, ?, ?, ?, ?)`
	// updateTaskSQL is the compare-and-set of UpdateTask and
	// UpdateTaskSteps: it matches only the version the caller read, and
	// returns the row's pk, which keys its step states and events, and
	// the indexed columns as they were. It sets no indexed column, so
	// that a step transition touches the row alone, not the four indexes
	// on status, plan_id and ended_at (SQLite updates an index whenever
	// the UPDATE sets one of its columns, to the same value or not); bytes
	// (the task's StoredBytes, for the quotas) is in no index.
	updateTaskSQL = `UPDATE tasks SET
		request = ?, inputs = ?, error = ?, error_code = ?, updated_at = ?, bytes = ?, version = version + 1
		WHERE id = ? AND version = ?
		RETURNING pk, plan_id, status, ended_at`
	// updateTaskIndexedSQL sets the indexed columns, when they change:
	// at the start and the end of a task.
	updateTaskIndexedSQL = "UPDATE tasks SET plan_id = ?, status = ?, ended_at = ? WHERE pk = ?"
	// insertTaskEventsSQL appends a batch of events, a JSON array, as the
	// task's next row of task_events.
	insertTaskEventsSQL = `INSERT INTO task_events (task_pk, seq, events)
		SELECT ?1, coalesce(max(seq), -1) + 1, ?2 FROM task_events WHERE task_pk = ?1`
	// deleteTaskStepsFromSQL deletes the step states from a position on,
	// and deleteTaskEventsSQL the whole history, before UpdateTask writes
	// them whole.
	deleteTaskStepsFromSQL = "DELETE FROM task_steps WHERE task_pk = ? AND idx >= ?"
	deleteTaskEventsSQL    = "DELETE FROM task_events WHERE task_pk = ?"
	releaseTaskLeaseSQL    = "UPDATE tasks SET lease_owner = '', lease_expires = 0 WHERE id = ? AND lease_owner = ?"
	// taskExistsSQL tells a missing task from a refused conditional
	// update, inside the same transaction.
	taskExistsSQL = "SELECT count(*) FROM tasks WHERE id = ?"
	// deleteEndedTasksSQL deletes one batch of the ended tasks, earliest
	// ended first, through the partial index tasks_ended, whose condition
	// it repeats word for word. INDEXED BY makes the statement fail rather
	// than scan the table if the index could not serve it. Their step
	// states and events go with them (ON DELETE CASCADE).
	deleteEndedTasksSQL = `DELETE FROM tasks WHERE id IN
		(SELECT id FROM tasks INDEXED BY tasks_ended
		WHERE status IN ('succeeded', 'failed', 'cancelled') AND ended_at > 0 AND ended_at < ?
		ORDER BY ended_at, id LIMIT ?)`
)

// upsertTaskStepsSQL[k] stores upsertStepRows[k] step states, as rows of
// (task_pk, idx, state) parameters: a change of n steps takes a few
// statements prepared at Open, and no JSON is parsed in SQL. The 64-row
// statement is for CreateTask: a 200-step task takes 5 statements instead
// of 14, about 5 % of its CPU (BenchmarkTaskWrites/CreateTask).
var (
	upsertStepRows     = []int{64, 16, 4, 1}
	upsertTaskStepsSQL = func() []string {
		var qs []string
		for _, n := range upsertStepRows {
			qs = append(qs, "INSERT INTO task_steps (task_pk, idx, state) VALUES "+
				strings.TrimSuffix(strings.Repeat("(?, ?, ?), ", n), ", ")+
				" ON CONFLICT (task_pk, idx) DO UPDATE SET state = excluded.state")
		}
		return qs
	}()
)

// acquireTaskLeaseSQL takes the lease if it is free, expired or the
// caller's, in one statement, and returns the task.
var acquireTaskLeaseSQL = `UPDATE tasks SET lease_owner = ?, lease_expires = ?
	WHERE id = ? AND (lease_owner = '' OR lease_expires <= ? OR lease_owner = ?)
	RETURNING ` + taskColumnsOf("tasks")

var (
	findTaskByIDSQL = "SELECT " + taskColumns + " FROM tasks t WHERE t.id = ?"
	// findTasksToResumeSQL reads the partial index tasks_resume, whose
	// condition it repeats word for word. INDEXED BY, because the planner
	// would rather take tasks_status_created and sort; it also makes the
	// statement fail if the index ever could not serve it.
	findTasksToResumeSQL = "SELECT " + taskColumns + ` FROM tasks t INDEXED BY tasks_resume
		WHERE t.status IN ('pending', 'running') AND t.lease_expires <= ?
		ORDER BY t.created_at, t.id LIMIT ?`
)

// storedStepState is the stored form of a StepState, an entry of
// tasks.steps: Output is a JSON string holding the caller's bytes, times
// are unix milliseconds (0 for a zero time). Its JSON names are part of the
// schema.
type storedStepState struct {
	StepID    string `json:"stepId"`
	Status    string `json:"status"`
	Attempts  int    `json:"attempts,omitempty"`
	Output    string `json:"output,omitempty"`
	Error     string `json:"error,omitempty"`
	Confirmed bool   `json:"confirmed,omitempty"`
	// Asks: absent for a step never asked (and in tasks stored before
	// it existed).
	Asks int `json:"asks,omitempty"`
	// RepairedTool and RepairedArguments: absent for a step never
	// repaired (and in tasks stored before repairs existed).
	RepairedTool      string `json:"repairedTool,omitempty"`
	RepairedArguments string `json:"repairedArguments,omitempty"`
	StartedAt         int64  `json:"startedAt,omitempty"`
	EndedAt           int64  `json:"endedAt,omitempty"`
}

// storedEvent is the stored form of a TaskEvent, an entry of
// tasks.history.
type storedEvent struct {
	At      int64  `json:"at"`
	Type    string `json:"type"`
	StepID  string `json:"stepId,omitempty"`
	Message string `json:"message,omitempty"`
}

// taskRow holds what a create or an update writes of a task besides the
// columns of its row.
type taskRow struct {
	steps   []any  // (0, position, storedStepState as JSON) per step state; writeTaskParts sets the 0, the task's pk
	events  string // JSON array of storedEvent to append, "" for none
	endedMS int64
}

// encodeTask encodes the step states of t at the positions steps (all of
// them when steps is nil) and the events.
func encodeTask(t *agentsmcp.Task, steps []int, events []agentsmcp.TaskEvent) (taskRow, error) {
	if steps == nil {
		steps = make([]int, len(t.Steps))
		for i := range steps {
			steps[i] = i
		}
	}
	row := taskRow{steps: make([]any, 0, 3*len(steps)), endedMS: msOrZero(t.EndedAt)}
	for _, i := range steps {
		s := &t.Steps[i]
		enc, err := json.Marshal(storedStepState{
			StepID: s.StepID, Status: string(s.Status), Attempts: s.Attempts, Output: string(s.Output), Error: s.Error,
			Confirmed: s.Confirmed, Asks: s.Asks, RepairedTool: s.RepairedTool, RepairedArguments: string(s.RepairedArguments),
			StartedAt: msOrZero(s.StartedAt), EndedAt: msOrZero(s.EndedAt),
		})
		if err != nil {
			return taskRow{}, fmt.Errorf("encode task step %q: %w", s.StepID, err)
		}
		row.steps = append(row.steps, int64(0), i, string(enc))
	}
	if len(events) > 0 {
		stored := make([]storedEvent, len(events))
		for i, e := range events {
			stored[i] = storedEvent{At: msOrZero(e.At), Type: e.Type, StepID: e.StepID, Message: e.Message}
		}
		h, err := json.Marshal(stored)
		if err != nil {
			return taskRow{}, fmt.Errorf("encode task history: %w", err)
		}
		row.events = string(h)
	}
	return row, nil
}

// writeTaskParts stores the step states and events of row for the task
// of pk: the step states in as few statements as upsertStepRows allow,
// the events as one row.
func (db *DB) writeTaskParts(ctx context.Context, tx *sql.Tx, pk int64, row taskRow) error {
	args := row.steps
	for k := 0; k < len(args); k += 3 {
		args[k] = pk
	}
	for q, n := range upsertStepRows {
		for len(args) >= 3*n {
			if _, err := db.txStmt(ctx, tx, upsertTaskStepsSQL[q]).ExecContext(ctx, args[:3*n]...); err != nil {
				return fmt.Errorf("store task steps: %w", err)
			}
			args = args[3*n:]
		}
	}
	if row.events != "" {
		if _, err := db.txStmt(ctx, tx, insertTaskEventsSQL).ExecContext(ctx, pk, row.events); err != nil {
			return fmt.Errorf("store task events: %w", err)
		}
	}
	return nil
}

// CreateTask implements [agentsmcp.TaskService].
func (db *DB) CreateTask(ctx context.Context, t *agentsmcp.Task) error {
	if err := validate.Task(t); err != nil {
		return err
	}
	id, created, status := t.ID, t.CreatedAt, t.Status
	if id == "" {
		id = agentsmcp.NewID(agentsmcp.TaskIDPrefix)
	}
	if created.IsZero() {
		created = now()
	}
	if status == "" {
		status = agentsmcp.TaskPending
	}
	history := storedform.TrimHistory(t.History)
	row, err := encodeTask(t, nil, history)
	if err != nil {
		return err
	}
	createdMS := toMillis(created)
	lease := agentsmcp.TaskLease{}
	var leaseMS int64
	if t.Lease.Owner != "" {
		leaseMS = toMillis(t.Lease.ExpiresAt)
		lease = agentsmcp.TaskLease{Owner: t.Lease.Owner, ExpiresAt: fromMillis(leaseMS)}
	}
	err = db.write(ctx, func(tx *sql.Tx) error {
		res, err := db.txStmt(ctx, tx, insertTaskSQL).ExecContext(ctx,
			id, t.PlanID, t.Principal, encodeTools(t.PrincipalTools), t.Request, string(status), string(t.Inputs), t.Error, t.ErrorCode,
			lease.Owner, leaseMS, createdMS, createdMS, row.endedMS, storedform.TaskBytes(t))
		if isUnique(err) {
			return agentsmcp.Errorf(agentsmcp.ECONFLICT, "task %q already exists", id)
		} else if err != nil {
			return fmt.Errorf("insert task: %w", err)
		}
		pk, err := res.LastInsertId()
		if err != nil {
			return fmt.Errorf("insert task: %w", err)
		}
		return db.writeTaskParts(ctx, tx, pk, row)
	})
	if err != nil {
		return err
	}
	t.ID, t.Status, t.History, t.Lease, t.Version = id, status, history, lease, 1
	t.CreatedAt = fromMillis(createdMS)
	t.UpdatedAt = t.CreatedAt
	return nil
}

// FindTaskByID implements [agentsmcp.TaskService].
func (db *DB) FindTaskByID(ctx context.Context, id string) (*agentsmcp.Task, error) {
	row, err := db.queryRow(ctx, findTaskByIDSQL, id)
	if err != nil {
		return nil, fmt.Errorf("find task %q: %w", id, err)
	}
	t, err := scanTask(row)
	if err != nil {
		return nil, notFound(err, "task", id)
	}
	return t, nil
}

// FindTasks implements [agentsmcp.TaskService]. A PlanID filter reads the
// index (plan_id, created_at, id), else a Principal filter (principal,
// created_at, id), else a Status filter (status, created_at, id), else
// (created_at, id), backwards.
func (db *DB) FindTasks(ctx context.Context, f agentsmcp.TaskFilter) ([]*agentsmcp.Task, string, error) {
	q, err := taskQuery(f)
	if err != nil {
		return nil, "", err
	}
	return findPage(ctx, db, q, f.Limit, "tasks", scanTask, taskCursor,
		func(t *agentsmcp.Task) cursor { return cursor{n: toMillis(t.CreatedAt), id: t.ID} })
}

func taskQuery(f agentsmcp.TaskFilter) (*listQuery, error) {
	q := &listQuery{columns: taskColumns, from: "tasks t", keyN: "t.created_at", keyID: "t.id"}
	if f.PlanID != "" {
		q.and("t.plan_id = ?", f.PlanID)
		if f.Status != "" {
			// Keep the plan's index: a plan has few tasks.
			q.and("+t.status = ?", string(f.Status))
		}
	} else if f.Principal != "" {
		q.and("t.principal = ?", f.Principal)
		if f.Status != "" {
			// Keep the principal's index.
			q.and("+t.status = ?", string(f.Status))
		}
	} else if f.Status != "" {
		q.and("t.status = ?", string(f.Status))
	}
	if f.PlanID != "" && f.Principal != "" {
		q.and("+t.principal = ?", f.Principal)
	}
	if f.Cursor != "" {
		c, err := decodeCursor(taskCursor, f.Cursor)
		if err != nil {
			return nil, err
		}
		q.after(c)
	}
	return q, nil
}

// UpdateTask implements [agentsmcp.TaskService] with one UPDATE … WHERE id
// = ? AND version = ?, then rewrites the step states and the history of the
// task; when the UPDATE matches no row, a read in the same transaction
// tells ENOTFOUND from ECONFLICT.
func (db *DB) UpdateTask(ctx context.Context, t *agentsmcp.Task) error {
	if err := validate.TaskUpdate(t); err != nil {
		return err
	}
	history := storedform.TrimHistory(t.History)
	row, err := encodeTask(t, nil, history)
	if err != nil {
		return err
	}
	err = db.updateTask(ctx, t, row, func(ctx context.Context, tx *sql.Tx, pk int64) error {
		if _, err := db.txStmt(ctx, tx, deleteTaskStepsFromSQL).ExecContext(ctx, pk, len(t.Steps)); err != nil {
			return fmt.Errorf("update task %q steps: %w", t.ID, err)
		}
		if _, err := db.txStmt(ctx, tx, deleteTaskEventsSQL).ExecContext(ctx, pk); err != nil {
			return fmt.Errorf("update task %q history: %w", t.ID, err)
		}
		if err := db.writeTaskParts(ctx, tx, pk, row); err != nil {
			return fmt.Errorf("update task %q: %w", t.ID, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	t.History = history
	return nil
}

// TasksVerbatim implements [agentsmcp.VerbatimTaskStore]: a task is read
// back as written, in the stored form of the stores (scanTask).
func (db *DB) TasksVerbatim() bool { return true }

// UpdateTaskSteps implements [agentsmcp.TaskStepUpdater]: the UPDATE of
// UpdateTask, then one upsert of the step states that changed and one
// insert of the new events, in the same transaction.
func (db *DB) UpdateTaskSteps(ctx context.Context, t *agentsmcp.Task, c agentsmcp.TaskChange) error {
	if err := validate.TaskChange(t, c); err != nil {
		return err
	}
	first := len(t.History) - c.Events
	row, err := encodeTask(t, nonNil(c.Steps), t.History[first:])
	if err != nil {
		return err
	}
	return db.updateTask(ctx, t, row, func(ctx context.Context, tx *sql.Tx, pk int64) error {
		if err := db.writeTaskParts(ctx, tx, pk, row); err != nil {
			return fmt.Errorf("update task %q: %w", t.ID, err)
		}
		return nil
	})
}

// nonNil is s, or an empty slice for nil: encodeTask reads nil as all.
func nonNil(s []int) []int {
	if s == nil {
		return []int{}
	}
	return s
}

// updateTask runs the compare-and-set of the task's row, then parts with
// the row's pk, in one transaction; on success it sets t's Version and
// UpdatedAt.
func (db *DB) updateTask(ctx context.Context, t *agentsmcp.Task, row taskRow, parts func(context.Context, *sql.Tx, int64) error) error {
	updated := now()
	err := db.write(ctx, func(tx *sql.Tx) error {
		var (
			pk, endedMS    int64
			planID, status string
		)
		err := db.txStmt(ctx, tx, updateTaskSQL).QueryRowContext(ctx,
			t.Request, string(t.Inputs), t.Error, t.ErrorCode, toMillis(updated), storedform.TaskBytes(t), t.ID, t.Version).Scan(&pk, &planID, &status, &endedMS)
		if errors.Is(err, sql.ErrNoRows) {
			return db.missOrConflict(ctx, tx, t.ID, "task %q changed since version %d was read", t.ID, t.Version)
		} else if err != nil {
			return fmt.Errorf("update task %q: %w", t.ID, err)
		}
		if planID != t.PlanID || status != string(t.Status) || endedMS != row.endedMS {
			if _, err := db.txStmt(ctx, tx, updateTaskIndexedSQL).ExecContext(ctx, t.PlanID, string(t.Status), row.endedMS, pk); err != nil {
				return fmt.Errorf("update task %q: %w", t.ID, err)
			}
		}
		return parts(ctx, tx, pk)
	})
	if err != nil {
		return err
	}
	t.Version++
	t.UpdatedAt = updated
	return nil
}

// missOrConflict returns ENOTFOUND when task id does not exist, and
// ECONFLICT with the given message when it does.
func (db *DB) missOrConflict(ctx context.Context, tx *sql.Tx, id string, format string, args ...any) error {
	if err := db.taskExists(ctx, tx, id); err != nil {
		return err
	}
	return agentsmcp.Errorf(agentsmcp.ECONFLICT, format, args...)
}

// taskExists returns nil when task id exists, ENOTFOUND when it does not.
func (db *DB) taskExists(ctx context.Context, tx *sql.Tx, id string) error {
	var n int
	if err := db.txStmt(ctx, tx, taskExistsSQL).QueryRowContext(ctx, id).Scan(&n); err != nil {
		return fmt.Errorf("find task %q: %w", id, err)
	}
	if n == 0 {
		return agentsmcp.Errorf(agentsmcp.ENOTFOUND, "task %q not found", id)
	}
	return nil
}

// AcquireTaskLease implements [agentsmcp.TaskService] with one conditional
// UPDATE … RETURNING.
func (db *DB) AcquireTaskLease(ctx context.Context, id, owner string, ttl time.Duration) (*agentsmcp.Task, error) {
	if err := validate.Lease(owner, ttl); err != nil {
		return nil, err
	}
	var t *agentsmcp.Task
	err := db.write(ctx, func(tx *sql.Tx) error {
		nowMS := toMillis(now())
		var err error
		t, err = scanTask(db.txStmt(ctx, tx, acquireTaskLeaseSQL).QueryRowContext(ctx,
			owner, nowMS+ttl.Milliseconds(), id, nowMS, owner))
		if errors.Is(err, sql.ErrNoRows) {
			return db.missOrConflict(ctx, tx, id, "the lease of task %q is held by another owner", id)
		} else if err != nil {
			return fmt.Errorf("acquire lease of task %q: %w", id, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// ReleaseTaskLease implements [agentsmcp.TaskService].
func (db *DB) ReleaseTaskLease(ctx context.Context, id, owner string) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		res, err := db.txStmt(ctx, tx, releaseTaskLeaseSQL).ExecContext(ctx, id, owner)
		if err != nil {
			return fmt.Errorf("release lease of task %q: %w", id, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("release lease of task %q: %w", id, err)
		} else if n == 0 {
			return db.taskExists(ctx, tx, id) // not held by owner: nothing to do
		}
		return nil
	})
}

// FindTasksToResume implements [agentsmcp.TaskService], reading the
// partial index tasks_resume in order.
func (db *DB) FindTasksToResume(ctx context.Context, now time.Time, limit int) ([]*agentsmcp.Task, error) {
	rows, err := db.query(ctx, findTasksToResumeSQL, toMillis(now), storedform.PageSize(limit))
	if err != nil {
		return nil, fmt.Errorf("find tasks to resume: %w", err)
	}
	defer rows.Close()
	items := []*agentsmcp.Task{}
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			return nil, fmt.Errorf("find tasks to resume: %w", err)
		}
		items = append(items, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find tasks to resume: %w", err)
	}
	return items, nil
}

// DeleteEndedTasks implements [agentsmcp.TaskService] in one transaction.
func (db *DB) DeleteEndedTasks(ctx context.Context, endedBefore time.Time, limit int) (int64, error) {
	var n int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		res, err := db.txStmt(ctx, tx, deleteEndedTasksSQL).ExecContext(ctx, ceilMillis(endedBefore), storedform.PageSize(limit))
		if err != nil {
			return fmt.Errorf("delete ended tasks: %w", err)
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}

func scanTask(row scanner) (*agentsmcp.Task, error) {
	var (
		t                             agentsmcp.Task
		steps, inputs, history        string
		tools                         string
		leaseMS, createdMS, updatedMS int64
		endedMS                       int64
		storedSteps                   []storedStepState
		storedEvents                  []storedEvent
	)
	if err := row.Scan(&t.ID, &t.PlanID, &t.Principal, &tools, &t.Request, &t.Status, &steps, &inputs, &history, &t.Error, &t.ErrorCode,
		&t.Lease.Owner, &leaseMS, &t.Version, &createdMS, &updatedMS, &endedMS); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(steps), &storedSteps); err != nil {
		return nil, fmt.Errorf("decode task steps: %w", err)
	}
	if tools != "" {
		if err := json.Unmarshal([]byte(tools), &t.PrincipalTools); err != nil {
			return nil, fmt.Errorf("decode task principal tools: %w", err)
		}
	}
	if err := json.Unmarshal([]byte(history), &storedEvents); err != nil {
		return nil, fmt.Errorf("decode task history: %w", err)
	}
	t.Steps = make([]agentsmcp.StepState, len(storedSteps))
	for i, s := range storedSteps {
		t.Steps[i] = agentsmcp.StepState{
			StepID: s.StepID, Status: agentsmcp.StepStatus(s.Status), Attempts: s.Attempts, Output: rawOrNil(s.Output),
			Error: s.Error, Confirmed: s.Confirmed, Asks: s.Asks, RepairedTool: s.RepairedTool, RepairedArguments: rawOrNil(s.RepairedArguments),
			StartedAt: timeOrZero(s.StartedAt), EndedAt: timeOrZero(s.EndedAt),
		}
	}
	t.History = make([]agentsmcp.TaskEvent, len(storedEvents))
	for i, e := range storedEvents {
		t.History[i] = agentsmcp.TaskEvent{At: timeOrZero(e.At), Type: e.Type, StepID: e.StepID, Message: e.Message}
	}
	if t.Lease.Owner != "" {
		t.Lease.ExpiresAt = fromMillis(leaseMS)
	}
	t.Inputs = rawOrNil(inputs)
	t.CreatedAt, t.UpdatedAt, t.EndedAt = fromMillis(createdMS), fromMillis(updatedMS), timeOrZero(endedMS)
	return &t, nil
}

// encodeTools is the stored form of a principal's allowlist: a JSON array,
// the empty string when empty.
func encodeTools(tools []string) string {
	if len(tools) == 0 {
		return ""
	}
	b, _ := json.Marshal(tools) // strings cannot fail
	return string(b)
}

// msOrZero is the stored form of a time that may be unset: 0 for the zero
// time.
func msOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return toMillis(t)
}

// timeOrZero reads what msOrZero wrote.
func timeOrZero(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return fromMillis(ms)
}
