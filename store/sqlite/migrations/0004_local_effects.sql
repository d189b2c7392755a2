-- The local effect of a team's own tool (declared with local = "local_effects"):
-- one row per operation, with the tool, tenant and canonical arguments,
-- committed in the operation's own transaction. The demo's tables (tasks,
-- report_jobs) stay as they are.
CREATE TABLE local_effects (
    id            INTEGER PRIMARY KEY,
    tenant        TEXT    NOT NULL,
    tool          TEXT    NOT NULL,
    args          TEXT    NOT NULL,
    operation_id  INTEGER NOT NULL UNIQUE,
    created_at    INTEGER NOT NULL
);
CREATE INDEX local_effects_tool ON local_effects (tool, tenant);
