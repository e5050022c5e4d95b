-- 0009: the retention of ended tasks (tasks.retention; DeleteEndedTasks in
-- task.go). Conventions as in 0001.
--
-- tasks_ended holds only the ended tasks, in the order the sweeper deletes
-- them, so that a sweep reads no running task and no whole table. Its
-- condition is repeated word for word by deleteEndedTasksSQL.
CREATE INDEX tasks_ended ON tasks (ended_at, id)
    WHERE status IN ('succeeded', 'failed', 'cancelled');

-- learnings.plan_id is the plan the learning's task ran unchanged
-- (Learning.PlanID), so that the planner can reuse the plan after the task
-- is deleted. Rows from before this migration have none: their plans are
-- found through their tasks, as long as those are kept.
ALTER TABLE learnings ADD COLUMN plan_id TEXT NOT NULL DEFAULT '';
