-- agents-mcp sqlite schema version 19
-- Generated from migrations/ by TestSchemaSnapshotMatchesMigrations -update-schema: do not edit.
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
, principal TEXT NOT NULL DEFAULT 'anonymous', bytes INTEGER NOT NULL DEFAULT 0);
CREATE TABLE insight_applies_to (
    value      TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    insight_id TEXT    NOT NULL,
    insight_pk INTEGER NOT NULL REFERENCES insights (pk) ON DELETE CASCADE,
    PRIMARY KEY (value, created_at, insight_id)
) WITHOUT ROWID;
CREATE VIRTUAL TABLE insights_fts USING fts5 (
    text,
    content = 'insights', content_rowid = 'pk',
    tokenize = 'unicode61 remove_diacritics 2'
);
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
, principal TEXT NOT NULL DEFAULT 'anonymous', plan_id TEXT NOT NULL DEFAULT '');
CREATE TABLE learning_tools (
    tool        TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    learning_id TEXT    NOT NULL,
    learning_pk INTEGER NOT NULL REFERENCES learnings (pk) ON DELETE CASCADE,
    PRIMARY KEY (tool, created_at, learning_id)
) WITHOUT ROWID;
CREATE TABLE learning_upstreams (
    upstream    TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    learning_id TEXT    NOT NULL,
    learning_pk INTEGER NOT NULL REFERENCES learnings (pk) ON DELETE CASCADE,
    PRIMARY KEY (upstream, created_at, learning_id)
) WITHOUT ROWID;
CREATE VIRTUAL TABLE learnings_fts USING fts5 (
    query, goal,
    content = 'learnings', content_rowid = 'pk',
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TABLE tool_performance (
    tool         TEXT    PRIMARY KEY,
    calls        INTEGER NOT NULL,
    errors       INTEGER NOT NULL,
    last_call_at INTEGER NOT NULL
, success_weight       REAL    NOT NULL DEFAULT 0, failure_weight       REAL    NOT NULL DEFAULT 0, weight_epoch         INTEGER, consecutive_failures INTEGER NOT NULL DEFAULT 0, last_success_at      INTEGER, last_failure_at      INTEGER, last_error_class     TEXT    NOT NULL DEFAULT '') WITHOUT ROWID;
CREATE TABLE tool_latency (
    tool   TEXT    NOT NULL REFERENCES tool_performance (tool) ON DELETE CASCADE,
    bucket INTEGER NOT NULL,
    calls  INTEGER NOT NULL,
    PRIMARY KEY (tool, bucket)
) WITHOUT ROWID;
CREATE TABLE tool_errors (
    tool    TEXT    NOT NULL REFERENCES tool_performance (tool) ON DELETE CASCADE,
    class   TEXT    NOT NULL,
    count   INTEGER NOT NULL,
    last_at INTEGER NOT NULL,
    PRIMARY KEY (tool, class)
) WITHOUT ROWID;
CREATE TABLE patterns (
    pk        INTEGER PRIMARY KEY,
    id        TEXT    NOT NULL UNIQUE,
    goal      TEXT    NOT NULL,
    steps     TEXT    NOT NULL,  -- JSON array
    uses      INTEGER NOT NULL,
    successes INTEGER NOT NULL,
    last_used INTEGER NOT NULL
, principal TEXT NOT NULL DEFAULT 'anonymous');
CREATE VIRTUAL TABLE patterns_fts USING fts5 (
    goal,
    content = 'patterns', content_rowid = 'pk',
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TABLE vector_outbox (
    key             TEXT    PRIMARY KEY,
    namespace       TEXT    NOT NULL,
    doc_id          TEXT    NOT NULL,
    op              TEXT    NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    last_error      TEXT    NOT NULL DEFAULT '',
    next_attempt_at INTEGER NOT NULL,
    lease_owner     TEXT    NOT NULL DEFAULT '',
    lease_until     INTEGER NOT NULL DEFAULT 0,
    created_at      INTEGER NOT NULL
) WITHOUT ROWID;
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
, principal TEXT NOT NULL DEFAULT '');
CREATE VIRTUAL TABLE thoughts_fts USING fts5 (
    request,
    content = 'thoughts', content_rowid = 'pk',
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TABLE plans (
    pk         INTEGER PRIMARY KEY,
    id         TEXT    NOT NULL UNIQUE,
    thought_id TEXT    NOT NULL,
    request    TEXT    NOT NULL,
    goal       TEXT    NOT NULL,
    steps      TEXT    NOT NULL,  -- JSON array of steps, arguments as strings
    inputs     TEXT    NOT NULL,  -- the caller's JSON, '' when none
    created_at INTEGER NOT NULL
, principal TEXT NOT NULL DEFAULT '');
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
, principal TEXT NOT NULL DEFAULT '', principal_tools TEXT NOT NULL DEFAULT '', error_code TEXT NOT NULL DEFAULT '', bytes INTEGER NOT NULL DEFAULT 0);
CREATE TABLE upstream_definitions (
    name       TEXT    PRIMARY KEY,
    config     TEXT    NOT NULL,
    revision   TEXT    NOT NULL,
    created_by TEXT    NOT NULL,
    created_at INTEGER NOT NULL
, kind TEXT NOT NULL DEFAULT 'mcp');
CREATE TABLE "audit_entries" (
    at         INTEGER NOT NULL,
    id         TEXT    NOT NULL,
    request_id TEXT    NOT NULL,
    principal  TEXT    NOT NULL,
    kind       TEXT    NOT NULL,
    target     TEXT    NOT NULL,
    transport  TEXT    NOT NULL,
    arguments  TEXT    NOT NULL,
    outcome    TEXT    NOT NULL,
    error      TEXT    NOT NULL,
    latency_ns INTEGER NOT NULL, client TEXT NOT NULL DEFAULT '', client_profile TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (at, id)
) WITHOUT ROWID;
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
CREATE TABLE credentials (
    id          TEXT    PRIMARY KEY,
    integration TEXT    NOT NULL,
    principal   TEXT    NOT NULL,
    kind        TEXT    NOT NULL,
    settings    TEXT    NOT NULL,
    sealed      TEXT    NOT NULL,
    expires_at  INTEGER NOT NULL,
    created_by  TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    UNIQUE (integration, principal)
);
CREATE TABLE oauth_states (
    state_key       TEXT    PRIMARY KEY,
    credential_id   TEXT    NOT NULL,
    principal       TEXT    NOT NULL,
    verifier_sealed TEXT    NOT NULL,
    expires_at      INTEGER NOT NULL
, binding TEXT NOT NULL DEFAULT '');
CREATE TABLE virtual_servers (
    name       TEXT    PRIMARY KEY,
    definition TEXT    NOT NULL,
    revision   TEXT    NOT NULL,
    created_by TEXT    NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE TABLE call_counters (
    key        TEXT    PRIMARY KEY,
    count      INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX insights_created      ON insights (created_at, id);
CREATE INDEX insights_type_created ON insights (type, created_at, id);
CREATE INDEX insight_applies_to_pk ON insight_applies_to (insight_pk);
CREATE INDEX learnings_created         ON learnings (created_at, id);
CREATE INDEX learnings_outcome_created ON learnings (outcome, created_at, id);
CREATE INDEX learning_tools_pk ON learning_tools (learning_pk);
CREATE INDEX learning_upstreams_pk ON learning_upstreams (learning_pk);
CREATE INDEX tool_performance_calls ON tool_performance (calls DESC, tool);
CREATE INDEX tool_errors_rank ON tool_errors (tool, count DESC, last_at DESC, class);
CREATE INDEX patterns_rank ON patterns (successes, id);
CREATE INDEX vector_outbox_due     ON vector_outbox (next_attempt_at, key);
CREATE INDEX vector_outbox_created ON vector_outbox (created_at);
CREATE INDEX catalog_tools_source ON catalog_tools (source, name);
CREATE INDEX thoughts_created ON thoughts (created_at, id);
CREATE INDEX plans_created         ON plans (created_at, id);
CREATE INDEX plans_thought_created ON plans (thought_id, created_at, id);
CREATE INDEX tasks_created        ON tasks (created_at, id);
CREATE INDEX tasks_status_created ON tasks (status, created_at, id);
CREATE INDEX tasks_plan_created   ON tasks (plan_id, created_at, id);
CREATE INDEX tasks_resume ON tasks (created_at, id, lease_expires)
    WHERE status IN ('pending', 'running');
CREATE INDEX thoughts_principal_created ON thoughts (principal, created_at, id);
CREATE INDEX plans_principal_created    ON plans (principal, created_at, id);
CREATE INDEX tasks_principal_created    ON tasks (principal, created_at, id);
CREATE INDEX insights_principal_created  ON insights  (principal, created_at, id);
CREATE INDEX learnings_principal_created ON learnings (principal, created_at, id);
CREATE INDEX patterns_principal_rank     ON patterns  (principal, successes, id);
CREATE INDEX tasks_ended ON tasks (ended_at, id)
    WHERE status IN ('succeeded', 'failed', 'cancelled');
CREATE INDEX audit_entries_principal_at ON audit_entries (principal, at, id);
CREATE INDEX audit_entries_target_at    ON audit_entries (target, at, id);
CREATE INDEX audit_entries_request_at   ON audit_entries (request_id, at, id) WHERE request_id != '';
CREATE INDEX audit_entries_kind_at      ON audit_entries (kind, at, id) WHERE kind != 'tool_call';
CREATE INDEX audit_entries_outcome_at   ON audit_entries (outcome, at, id) WHERE outcome != 'ok';
CREATE INDEX upstream_definitions_kind ON upstream_definitions (kind, name);
CREATE INDEX insights_principal_bytes ON insights (principal, bytes);
CREATE INDEX call_counters_expires ON call_counters (expires_at);
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
CREATE TRIGGER patterns_fts_insert AFTER INSERT ON patterns BEGIN
    INSERT INTO patterns_fts (rowid, goal) VALUES (new.pk, new.goal);
END;
CREATE TRIGGER patterns_fts_delete AFTER DELETE ON patterns BEGIN
    INSERT INTO patterns_fts (patterns_fts, rowid, goal) VALUES ('delete', old.pk, old.goal);
END;
CREATE TRIGGER patterns_fts_update AFTER UPDATE OF goal ON patterns BEGIN
    INSERT INTO patterns_fts (patterns_fts, rowid, goal) VALUES ('delete', old.pk, old.goal);
    INSERT INTO patterns_fts (rowid, goal) VALUES (new.pk, new.goal);
END;
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
