-- 0005: the upstreams added at run time (upstream.go in the root package).
-- Conventions as in 0001: times are INTEGER unix milliseconds.
--
-- One row per definition, keyed by name, whose primary key also serves the
-- list, read in name order (BINARY collation: byte order). config holds the
-- caller's JSON object as the exact bytes given, never re-encoded; it may
-- hold credentials. revision is the id assigned at each create; created_by
-- is '' when no principal was given. The table stays small: the store
-- keeps at most MaxUpstreamDefinitions rows.
CREATE TABLE upstream_definitions (
    name       TEXT    PRIMARY KEY,
    config     TEXT    NOT NULL,
    revision   TEXT    NOT NULL,
    created_by TEXT    NOT NULL,
    created_at INTEGER NOT NULL
);
