-- Bearer tokens of the gateway (`retrysafe serve`, `retrysafe mcp`): each
-- maps to one tenant. Only the SHA-256 of a token is kept, never the token.
CREATE TABLE tokens (
    id         INTEGER PRIMARY KEY,
    tenant     TEXT    NOT NULL CHECK (length(tenant) BETWEEN 1 AND 512),
    name       TEXT    NOT NULL DEFAULT '',
    hash       TEXT    NOT NULL UNIQUE CHECK (length(hash) = 64),
    hint       TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
);
CREATE INDEX tokens_tenant ON tokens (tenant, id);
