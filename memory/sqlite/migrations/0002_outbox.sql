-- 0002: the vector outbox (see outbox.go in the root package). Entries are
-- written in the same transaction as the document they name, so a
-- committed document always has its pending index change.
--
-- key is namespace/op/doc_id: one pending entry per change, and enqueueing
-- a pending change again is INSERT OR IGNORE. Claims order by
-- (next_attempt_at, key) over due entries whose lease expired; lease_until
-- is 0 for an unclaimed entry.

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
CREATE INDEX vector_outbox_due     ON vector_outbox (next_attempt_at, key);
CREATE INDEX vector_outbox_created ON vector_outbox (created_at);
