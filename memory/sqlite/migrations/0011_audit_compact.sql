-- 0011: an audit trail that costs less per call (issue 17). Conventions as
-- in 0004.
--
-- 0004 kept every entry in eight B-trees: the table, its id key, (at, id),
-- and one index per filter. A stored tool call cost about 600 bytes and
-- eight B-tree inserts. Now:
--   - the table is clustered on its sort key (at, id) (WITHOUT ROWID): the
--     table is the index that pages, retention and the size bound read, and
--     no separate id key is kept. An id is unique (a ULID), and a retried
--     entry comes back with the same id and at, which the key skips;
--   - principal, target and request id, the filters that pick out a few
--     entries of the many tool calls, keep an index (field, at, id);
--   - kind and outcome index only the entries that are not the common
--     case: kind != 'tool_call' (admin writes, auth failures, MCP reads and
--     writes) and outcome != 'ok' (errors and denials). A filter on the
--     common value reads the table newest first, where nearly every entry
--     matches, so its page fills at once; the rare values, which a page
--     would otherwise have to search for, are found through the index. The
--     queries repeat the index's condition literally so that SQLite uses it.
-- A tool call that succeeds is now stored in four B-trees.
CREATE TABLE audit_entries_new (
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
    latency_ns INTEGER NOT NULL,
    PRIMARY KEY (at, id)
) WITHOUT ROWID;
INSERT INTO audit_entries_new (at, id, request_id, principal, kind, target, transport, arguments, outcome, error, latency_ns)
    SELECT at, id, request_id, principal, kind, target, transport, arguments, outcome, error, latency_ns FROM audit_entries;
DROP TABLE audit_entries;
ALTER TABLE audit_entries_new RENAME TO audit_entries;
CREATE INDEX audit_entries_principal_at ON audit_entries (principal, at, id);
CREATE INDEX audit_entries_target_at    ON audit_entries (target, at, id);
CREATE INDEX audit_entries_request_at   ON audit_entries (request_id, at, id) WHERE request_id != '';
CREATE INDEX audit_entries_kind_at      ON audit_entries (kind, at, id) WHERE kind != 'tool_call';
CREATE INDEX audit_entries_outcome_at   ON audit_entries (outcome, at, id) WHERE outcome != 'ok';
