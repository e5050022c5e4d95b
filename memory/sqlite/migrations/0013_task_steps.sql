-- 0012: a task's step states and history in tables of their own, so that a
-- step transition writes the steps and events that changed instead of the
-- whole task (UpdateTaskSteps in task.go; issue 17, part 6). Conventions as
-- in 0001.
--
-- task_steps holds one row per step state, at its position in Task.Steps:
-- state is the JSON object that tasks.steps held as an array entry
-- (storedStepState), unchanged. task_events holds the history in batches,
-- one row per write that added events, oldest first by seq: events is a
-- JSON array of storedEvent, never empty, so that a write appends one row
-- whatever number of events it adds. Reads put the arrays back together in
-- SQL (taskColumnsOf), so tasks.steps and tasks.history are '' from now on.
-- The rows go with their task.
CREATE TABLE task_steps (
    task_pk INTEGER NOT NULL REFERENCES tasks (pk) ON DELETE CASCADE,
    idx     INTEGER NOT NULL,
    state   TEXT    NOT NULL,
    PRIMARY KEY (task_pk, idx)
) WITHOUT ROWID;

CREATE TABLE task_events (
    task_pk INTEGER NOT NULL REFERENCES tasks (pk) ON DELETE CASCADE,
    seq     INTEGER NOT NULL,
    events  TEXT    NOT NULL,
    PRIMARY KEY (task_pk, seq)
) WITHOUT ROWID;

-- The tasks stored whole before this migration are copied, so that every
-- read takes one path.
INSERT INTO task_steps (task_pk, idx, state)
    SELECT t.pk, j.key, j.value FROM tasks t, json_each(t.steps) j WHERE t.steps <> '';
INSERT INTO task_events (task_pk, seq, events)
    SELECT t.pk, 0, t.history FROM tasks t WHERE t.history NOT IN ('', '[]');
UPDATE tasks SET steps = '', history = '';
