-- 0016: the stored size of each insight and task (Insight.StoredBytes,
-- Task.StoredBytes in the root package), written at each write, so that
-- the quotas per principal (issue 25, item 10) sum it without reading the
-- texts. Insights are never updated: (principal, bytes) covers their
-- usage query. Tasks are, at every step transition, which must not touch
-- an index for it (see updateTaskSQL): their usage reads the rows of the
-- principal through tasks_principal_created.
--
-- Rows from before are given their size as stored: the bytes of their
-- texts and of the JSON that holds their lists, steps and events, which
-- is a little more than StoredBytes counts, until they are written again.
ALTER TABLE insights ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks    ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0;

UPDATE insights SET bytes = octet_length(text) + octet_length(source)
    + (SELECT coalesce(sum(octet_length(j.value)), 0) FROM json_each(insights.applies_to) j)
    + (SELECT coalesce(sum(octet_length(j.value)), 0) FROM json_each(insights.evidence) j);
UPDATE tasks SET bytes = octet_length(request) + octet_length(inputs) + octet_length(error)
    + (SELECT coalesce(sum(octet_length(s.state)), 0) FROM task_steps s WHERE s.task_pk = tasks.pk)
    + (SELECT coalesce(sum(octet_length(e.events)), 0) FROM task_events e WHERE e.task_pk = tasks.pk);

CREATE INDEX insights_principal_bytes ON insights (principal, bytes);
