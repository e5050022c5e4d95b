-- 0001: the memory aggregates (insights, learnings, tool performance, plan
-- patterns).
--
-- Conventions:
--   * Times are INTEGER unix milliseconds, UTC: the precision the domain
--     promises (and MongoDB keeps), and the sort key of every list.
--   * Each aggregate with text search has an explicit INTEGER PRIMARY KEY
--     (pk). External-content FTS5 tables point at it by rowid, and only an
--     INTEGER PRIMARY KEY keeps its value across VACUUM.
--   * List fields are stored as JSON arrays in the row, so that reads need
--     no join; the lists a filter needs are repeated in side tables whose
--     primary key serves the filter and the sort order: (value, created_at,
--     id) lets a filtered page be read straight off the index, newest first,
--     and resumed from a cursor without sorting.
--   * FTS5 tables are external content (content=...): the text is stored
--     once, in the aggregate's table, and triggers keep the index in step
--     inside the same transaction. A contentless table would also store the
--     text once, but could not delete rows by value without
--     contentless_delete, and an index that cannot be rebuilt from the rows
--     ('rebuild') is harder to repair.
--   * Tokenizer unicode61 with remove_diacritics 2: words are runs of
--     letters and digits, case and accents folded.

CREATE TABLE insights (
    pk         INTEGER PRIMARY KEY,
    id         TEXT    NOT NULL UNIQUE,
    text       TEXT    NOT NULL,
    type       TEXT    NOT NULL,
    applies_to TEXT    NOT NULL,  -- JSON array
    confidence REAL    NOT NULL,
    evidence   TEXT    NOT NULL,  -- JSON array
    source     TEXT    NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX insights_created      ON insights (created_at, id);
CREATE INDEX insights_type_created ON insights (type, created_at, id);

CREATE TABLE insight_applies_to (
    value      TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    insight_id TEXT    NOT NULL,
    insight_pk INTEGER NOT NULL REFERENCES insights (pk) ON DELETE CASCADE,
    PRIMARY KEY (value, created_at, insight_id)
) WITHOUT ROWID;
-- Serves the ON DELETE CASCADE lookup.
CREATE INDEX insight_applies_to_pk ON insight_applies_to (insight_pk);

CREATE VIRTUAL TABLE insights_fts USING fts5 (
    text,
    content = 'insights', content_rowid = 'pk',
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER insights_fts_insert AFTER INSERT ON insights BEGIN
    INSERT INTO insights_fts (rowid, text) VALUES (new.pk, new.text);
END;
CREATE TRIGGER insights_fts_delete AFTER DELETE ON insights BEGIN
    INSERT INTO insights_fts (insights_fts, rowid, text) VALUES ('delete', old.pk, old.text);
END;
CREATE TRIGGER insights_fts_update AFTER UPDATE OF text ON insights BEGIN
    INSERT INTO insights_fts (insights_fts, rowid, text) VALUES ('delete', old.pk, old.text);
    INSERT INTO insights_fts (rowid, text) VALUES (new.pk, new.text);
END;

CREATE TABLE learnings (
    pk          INTEGER PRIMARY KEY,
    id          TEXT    NOT NULL UNIQUE,
    task_id     TEXT    NOT NULL,
    query       TEXT    NOT NULL,
    goal        TEXT    NOT NULL,
    steps       TEXT    NOT NULL,  -- JSON array
    tools       TEXT    NOT NULL,  -- JSON array
    upstreams   TEXT    NOT NULL,  -- JSON array
    outcome     TEXT    NOT NULL,
    duration_ns INTEGER NOT NULL,
    errors      TEXT    NOT NULL,  -- JSON array
    retries     INTEGER NOT NULL,
    created_at  INTEGER NOT NULL
);
CREATE INDEX learnings_created         ON learnings (created_at, id);
CREATE INDEX learnings_outcome_created ON learnings (outcome, created_at, id);

CREATE TABLE learning_tools (
    tool        TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    learning_id TEXT    NOT NULL,
    learning_pk INTEGER NOT NULL REFERENCES learnings (pk) ON DELETE CASCADE,
    PRIMARY KEY (tool, created_at, learning_id)
) WITHOUT ROWID;
CREATE INDEX learning_tools_pk ON learning_tools (learning_pk);

CREATE TABLE learning_upstreams (
    upstream    TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    learning_id TEXT    NOT NULL,
    learning_pk INTEGER NOT NULL REFERENCES learnings (pk) ON DELETE CASCADE,
    PRIMARY KEY (upstream, created_at, learning_id)
) WITHOUT ROWID;
CREATE INDEX learning_upstreams_pk ON learning_upstreams (learning_pk);

CREATE VIRTUAL TABLE learnings_fts USING fts5 (
    query, goal,
    content = 'learnings', content_rowid = 'pk',
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER learnings_fts_insert AFTER INSERT ON learnings BEGIN
    INSERT INTO learnings_fts (rowid, query, goal) VALUES (new.pk, new.query, new.goal);
END;
CREATE TRIGGER learnings_fts_delete AFTER DELETE ON learnings BEGIN
    INSERT INTO learnings_fts (learnings_fts, rowid, query, goal) VALUES ('delete', old.pk, old.query, old.goal);
END;
CREATE TRIGGER learnings_fts_update AFTER UPDATE OF query, goal ON learnings BEGIN
    INSERT INTO learnings_fts (learnings_fts, rowid, query, goal) VALUES ('delete', old.pk, old.query, old.goal);
    INSERT INTO learnings_fts (rowid, query, goal) VALUES (new.pk, new.query, new.goal);
END;

-- Tool performance: counters only ever change by UPSERTs of the form
-- calls = calls + 1, so concurrent recorders never lose an increment.
CREATE TABLE tool_performance (
    tool         TEXT    PRIMARY KEY,
    calls        INTEGER NOT NULL,
    errors       INTEGER NOT NULL,
    last_call_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX tool_performance_calls ON tool_performance (calls DESC, tool);

-- One row per (tool, histogram bucket) that has calls; bucket i is
-- agentsmcp.LatencyBucketBounds[i], the last index the open bucket.
CREATE TABLE tool_latency (
    tool   TEXT    NOT NULL REFERENCES tool_performance (tool) ON DELETE CASCADE,
    bucket INTEGER NOT NULL,
    calls  INTEGER NOT NULL,
    PRIMARY KEY (tool, bucket)
) WITHOUT ROWID;

-- Error classes with their counts, trimmed to the most frequent few per
-- tool after each error (see toolperf.go).
CREATE TABLE tool_errors (
    tool    TEXT    NOT NULL REFERENCES tool_performance (tool) ON DELETE CASCADE,
    class   TEXT    NOT NULL,
    count   INTEGER NOT NULL,
    last_at INTEGER NOT NULL,
    PRIMARY KEY (tool, class)
) WITHOUT ROWID;
CREATE INDEX tool_errors_rank ON tool_errors (tool, count DESC, last_at DESC, class);

-- Plan patterns: id is derived from a hash of (goal, steps), so the UNIQUE
-- id is the pattern key and RecordPatternUse is one UPSERT on it.
CREATE TABLE patterns (
    pk        INTEGER PRIMARY KEY,
    id        TEXT    NOT NULL UNIQUE,
    goal      TEXT    NOT NULL,
    steps     TEXT    NOT NULL,  -- JSON array
    uses      INTEGER NOT NULL,
    successes INTEGER NOT NULL,
    last_used INTEGER NOT NULL
);
CREATE INDEX patterns_rank ON patterns (successes, id);

CREATE VIRTUAL TABLE patterns_fts USING fts5 (
    goal,
    content = 'patterns', content_rowid = 'pk',
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER patterns_fts_insert AFTER INSERT ON patterns BEGIN
    INSERT INTO patterns_fts (rowid, goal) VALUES (new.pk, new.goal);
END;
CREATE TRIGGER patterns_fts_delete AFTER DELETE ON patterns BEGIN
    INSERT INTO patterns_fts (patterns_fts, rowid, goal) VALUES ('delete', old.pk, old.goal);
END;
-- Only a change of goal touches the index: counting a use does not.
CREATE TRIGGER patterns_fts_update AFTER UPDATE OF goal ON patterns BEGIN
    INSERT INTO patterns_fts (patterns_fts, rowid, goal) VALUES ('delete', old.pk, old.goal);
    INSERT INTO patterns_fts (rowid, goal) VALUES (new.pk, new.goal);
END;
