-- Sort by tool and the `:provider` filter walk an index instead of reading
-- every operation: at 1,000,000 operations the first page of sort by tool
-- took 1.3-4.7 s and a `:provider` that matched little 2 s, each a full
-- scan; with these, 4-12 ms. Every order ends on id, so keyset paging in it
-- is an index range. Not indexed on purpose: updated_at (sort by last
-- change) would be rewritten on every state change, two per new call, and
-- cost new calls more than the rare all-tabs sort by change gains; a state
-- tab sorts its own rows from (state, id). (PostgreSQL's migration 7, kept in
-- step.)
CREATE INDEX operations_tool_id ON operations (tool, id);
CREATE INDEX operations_provider_id ON operations (provider, id) WHERE provider IS NOT NULL;
