-- A tenant's operations across every state, newest first, walk (tenant, id)
-- instead of sorting the tenant's every row (300 ms for 50,000 before).
CREATE INDEX operations_tenant_id ON operations (tenant, id);
