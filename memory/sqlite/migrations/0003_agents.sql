-- 0003: the agents' data (catalog.go, plan.go and task.go in the root
-- package): the tool catalog, thoughts, plans and tasks. Conventions as in
-- 0001: times are INTEGER unix milliseconds (0 for a zero time where a time
-- may be unset), list and nested fields are JSON text, and every list
-- query reads its page straight off an index ending in its sort key.
--
-- JSON the caller supplies (schemas, step arguments, outputs, inputs) is
-- kept as the exact bytes given: the nested JSON columns hold it as JSON
-- strings, never re-encoded.

-- The catalog: one row per tool, name unique across sources.
-- ReplaceCatalogSource deletes the rows of a source and inserts the new
-- set in one transaction. The embedding is a BLOB of little-endian
-- float32.
CREATE TABLE catalog_tools (
    name          TEXT    PRIMARY KEY,
    source        TEXT    NOT NULL,
    title         TEXT    NOT NULL,
    description   TEXT    NOT NULL,
    input_schema  TEXT    NOT NULL,  -- the caller's JSON, '' when none
    output_schema TEXT    NOT NULL,
    destructive   INTEGER NOT NULL,
    read_only     INTEGER NOT NULL,
    hash          TEXT    NOT NULL,
    embedder_id   TEXT    NOT NULL,
    embedding     BLOB    NOT NULL,
    updated_at    INTEGER NOT NULL
);
CREATE INDEX catalog_tools_source ON catalog_tools (source, name);

-- Thoughts: written once. Text filters search request.
CREATE TABLE thoughts (
    pk                INTEGER PRIMARY KEY,
    id                TEXT    NOT NULL UNIQUE,
    request           TEXT    NOT NULL,
    sub_goals         TEXT    NOT NULL,  -- JSON array
    reasoning         TEXT    NOT NULL,
    approaches        TEXT    NOT NULL,  -- JSON array
    constraints       TEXT    NOT NULL,  -- JSON array
    assumptions       TEXT    NOT NULL,  -- JSON array
    uncertainties     TEXT    NOT NULL,  -- JSON array
    confidence        REAL    NOT NULL,
    recommended_tools TEXT    NOT NULL,  -- JSON array of {tool, reason}
    created_at        INTEGER NOT NULL
);
CREATE INDEX thoughts_created ON thoughts (created_at, id);

CREATE VIRTUAL TABLE thoughts_fts USING fts5 (
    request,
    content = 'thoughts', content_rowid = 'pk',
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER thoughts_fts_insert AFTER INSERT ON thoughts BEGIN
    INSERT INTO thoughts_fts (rowid, request) VALUES (new.pk, new.request);
END;
CREATE TRIGGER thoughts_fts_delete AFTER DELETE ON thoughts BEGIN
    INSERT INTO thoughts_fts (thoughts_fts, rowid, request) VALUES ('delete', old.pk, old.request);
END;
CREATE TRIGGER thoughts_fts_update AFTER UPDATE OF request ON thoughts BEGIN
    INSERT INTO thoughts_fts (thoughts_fts, rowid, request) VALUES ('delete', old.pk, old.request);
    INSERT INTO thoughts_fts (rowid, request) VALUES (new.pk, new.request);
END;

-- Plans: written once; thought_id is '' for a plan without a thought.
CREATE TABLE plans (
    pk         INTEGER PRIMARY KEY,
    id         TEXT    NOT NULL UNIQUE,
    thought_id TEXT    NOT NULL,
    request    TEXT    NOT NULL,
    goal       TEXT    NOT NULL,
    steps      TEXT    NOT NULL,  -- JSON array of steps, arguments as strings
    inputs     TEXT    NOT NULL,  -- the caller's JSON, '' when none
    created_at INTEGER NOT NULL
);
CREATE INDEX plans_created         ON plans (created_at, id);
CREATE INDEX plans_thought_created ON plans (thought_id, created_at, id);

-- Tasks: rewritten at every step transition by UPDATE … WHERE id = ? AND
-- version = ?, and leased by UPDATE … WHERE id = ? AND (the lease is free,
-- expired or the caller's). A free lease is lease_owner '' and
-- lease_expires 0, so "free or expired at t" is lease_expires <= t.
CREATE TABLE tasks (
    pk            INTEGER PRIMARY KEY,
    id            TEXT    NOT NULL UNIQUE,
    plan_id       TEXT    NOT NULL,
    request       TEXT    NOT NULL,
    status        TEXT    NOT NULL,
    steps         TEXT    NOT NULL,  -- JSON array of step states, outputs as strings
    inputs        TEXT    NOT NULL,  -- the caller's JSON, '' when none
    history       TEXT    NOT NULL,  -- JSON array of events
    error         TEXT    NOT NULL,
    lease_owner   TEXT    NOT NULL,
    lease_expires INTEGER NOT NULL,
    version       INTEGER NOT NULL,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    ended_at      INTEGER NOT NULL   -- 0 until the task ends
);
CREATE INDEX tasks_created        ON tasks (created_at, id);
CREATE INDEX tasks_status_created ON tasks (status, created_at, id);
CREATE INDEX tasks_plan_created   ON tasks (plan_id, created_at, id);
-- FindTasksToResume: the tasks that may need an executor, oldest first,
-- with the lease expiry in the index so that held ones are skipped
-- without reading their rows.
CREATE INDEX tasks_resume ON tasks (created_at, id, lease_expires)
    WHERE status IN ('pending', 'running');
