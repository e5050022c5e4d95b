-- 0010: the error code of a task that the executor itself failed
-- (Task.ErrorCode, ADR 0010 A6). Conventions as in 0001.
--
-- Rows from before this migration have none: a task that failed then shows
-- as a task whose steps failed. StepState.Asks needs no column: it is a
-- field of the step states in tasks.steps, absent (0) in older rows.
ALTER TABLE tasks ADD COLUMN error_code TEXT NOT NULL DEFAULT '';
