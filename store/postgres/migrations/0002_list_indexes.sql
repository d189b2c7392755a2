-- A tenant's operations across every state, newest first, walk (tenant, id)
-- instead of sorting the tenant's every row (SQLite's migration 2, kept in
-- step).
CREATE INDEX operations_tenant_id ON operations (tenant, id);
