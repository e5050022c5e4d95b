-- 0006: who created each thought, plan and task (the Principal fields of
-- plan.go and task.go in the root package), so that over MCP only they, or
-- an admin, see and control them. '' for rows written before, or without
-- a principal: only admins see those.
--
-- tasks.principal_tools is the creator's tool allowlist as a JSON array,
-- '' for none (every tool); the executor checks each step against it.
-- Each list filtered by principal reads an index ending in its sort key.
ALTER TABLE thoughts ADD COLUMN principal TEXT NOT NULL DEFAULT '';
ALTER TABLE plans    ADD COLUMN principal TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks    ADD COLUMN principal TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks    ADD COLUMN principal_tools TEXT NOT NULL DEFAULT '';
CREATE INDEX thoughts_principal_created ON thoughts (principal, created_at, id);
CREATE INDEX plans_principal_created    ON plans (principal, created_at, id);
CREATE INDEX tasks_principal_created    ON tasks (principal, created_at, id);
