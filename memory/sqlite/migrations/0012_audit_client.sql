-- 0012: the client of a tool call and the profile its answer was shaped
-- for (issue 16, client profiles). Conventions as in 0004: empty strings,
-- never NULL. ADD COLUMN rewrites nothing: old entries read the default.
ALTER TABLE audit_entries ADD COLUMN client TEXT NOT NULL DEFAULT '';
ALTER TABLE audit_entries ADD COLUMN client_profile TEXT NOT NULL DEFAULT '';
