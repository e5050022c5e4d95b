-- 0007: memory records the principal it came from (memory.go in the root
-- package: MemoryVisibility). Conventions as in 0001.
--
-- insights, learnings and patterns get a principal column: the ID of the
-- principal whose call or task produced the row. Rows from before this
-- migration get 'anonymous' (agentsmcp.AnonymousPrincipal): who produced
-- them is unknown, so under the default visibility ("principal") only the
-- anonymous principal of a server without credentials and the admin API
-- see them; under "shared" every principal does, as before. The stores
-- always write the column, so the default serves only those old rows.
--
-- A pattern's id is derived from (principal, goal, steps), and for the
-- anonymous principal from (goal, steps) as before, so the old rows keep
-- their ids and counters.
--
-- Each list query confined to one principal reads an index (principal,
-- sort key) in order, as the unconfined ones read (sort key).
ALTER TABLE insights  ADD COLUMN principal TEXT NOT NULL DEFAULT 'anonymous';
ALTER TABLE learnings ADD COLUMN principal TEXT NOT NULL DEFAULT 'anonymous';
ALTER TABLE patterns  ADD COLUMN principal TEXT NOT NULL DEFAULT 'anonymous';

CREATE INDEX insights_principal_created  ON insights  (principal, created_at, id);
CREATE INDEX learnings_principal_created ON learnings (principal, created_at, id);
CREATE INDEX patterns_principal_rank     ON patterns  (principal, successes, id);
