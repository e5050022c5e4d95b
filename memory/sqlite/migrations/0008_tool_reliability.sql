-- 0008: the evidence of tool reliability (reliability.go in the root
-- package). Conventions as in 0001.
--
-- success_weight and failure_weight are the tool's outcomes weighed by age,
-- as of weight_epoch (ms): a call at t adds
-- 2^((t - weight_epoch) / agentsmcp.ReliabilityHalfLife), and the store
-- moves weight_epoch forward, scaling both weights, before they grow large
-- (see toolperf.go). Rows from before this migration start with their whole
-- counts weighed as of their last call: what was known then still counts,
-- and fades from there.
--
-- consecutive_failures counts the failures recorded since the last
-- success; last_success_at and last_failure_at (ms, NULL for never) are the
-- latest times of each outcome; last_error_class is the class of the
-- failure recorded last. Old rows have no streak and no times: unknown.
ALTER TABLE tool_performance ADD COLUMN success_weight       REAL    NOT NULL DEFAULT 0;
ALTER TABLE tool_performance ADD COLUMN failure_weight       REAL    NOT NULL DEFAULT 0;
ALTER TABLE tool_performance ADD COLUMN weight_epoch         INTEGER;
ALTER TABLE tool_performance ADD COLUMN consecutive_failures INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tool_performance ADD COLUMN last_success_at      INTEGER;
ALTER TABLE tool_performance ADD COLUMN last_failure_at      INTEGER;
ALTER TABLE tool_performance ADD COLUMN last_error_class     TEXT    NOT NULL DEFAULT '';

UPDATE tool_performance SET
    success_weight = calls - errors,
    failure_weight = errors,
    weight_epoch   = last_call_at;
