-- 0018: the virtual servers added at run time (virtual_server.go in the
-- root package). Conventions as in 0001: times are INTEGER unix
-- milliseconds.
--
-- One row per definition, keyed by name, whose primary key also serves the
-- list, read in name order. definition holds the VirtualServer as JSON
-- (its selections, renames, descriptions); revision is the id assigned at
-- each create or replace. The table stays small: the store keeps at most
-- MaxVirtualServers rows.
CREATE TABLE virtual_servers (
    name       TEXT    PRIMARY KEY,
    definition TEXT    NOT NULL,
    revision   TEXT    NOT NULL,
    created_by TEXT    NOT NULL,
    created_at INTEGER NOT NULL
);
