-- 0019: the counters of the call quotas (call_quota.go in the root
-- package), shared by every replica that opens the file. Conventions as in
-- 0001: times are INTEGER unix milliseconds.
--
-- One row per counter, keyed by its name (principal, quota, window);
-- expires_at is the end of its window, after which AddCallCount deletes
-- it in passing, through call_counters_expires.
CREATE TABLE call_counters (
    key        TEXT    PRIMARY KEY,
    count      INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
) WITHOUT ROWID;

CREATE INDEX call_counters_expires ON call_counters (expires_at);
