-- 0004: the audit trail (audit.go in the root package). Conventions as in
-- 0001: times are INTEGER unix milliseconds, and every list query reads its
-- page straight off an index ending in its sort key (at, id).
--
-- Entries are written once and removed only by retention, which deletes by
-- at through audit_entries_at. Each filter of AuditFilter has an index
-- (field, at, id), so a filtered page is an index range read newest first;
-- request ids are mostly looked up one at a time, and only entries that
-- have one are indexed. Arguments hold the redacted JSON as given, '' when
-- none.
CREATE TABLE audit_entries (
    id         TEXT    PRIMARY KEY,
    at         INTEGER NOT NULL,
    request_id TEXT    NOT NULL,
    principal  TEXT    NOT NULL,
    kind       TEXT    NOT NULL,
    target     TEXT    NOT NULL,
    transport  TEXT    NOT NULL,
    arguments  TEXT    NOT NULL,
    outcome    TEXT    NOT NULL,
    error      TEXT    NOT NULL,
    latency_ns INTEGER NOT NULL
);
CREATE INDEX audit_entries_at           ON audit_entries (at, id);
CREATE INDEX audit_entries_principal_at ON audit_entries (principal, at, id);
CREATE INDEX audit_entries_kind_at      ON audit_entries (kind, at, id);
CREATE INDEX audit_entries_target_at    ON audit_entries (target, at, id);
CREATE INDEX audit_entries_outcome_at   ON audit_entries (outcome, at, id);
CREATE INDEX audit_entries_request_at   ON audit_entries (request_id, at, id) WHERE request_id != '';
