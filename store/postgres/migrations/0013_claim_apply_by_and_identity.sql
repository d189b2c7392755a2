-- What an operation's claims recorded of the request they sent, in the
-- config of the process that made them:
--   claim_apply_by (Unix ms): until when the provider may still apply a
--     request of its claims — the claim's lease end plus the grace that
--     config gave its provider (its request timeout, or longer). A later
--     claim keeps the later time. A lookup that finds nothing before it is
--     "cannot tell", whatever the looking process's config says now.
--   claim_dispatch_id: where the latest claim's request went (the
--     provider's kind, method, scheme, host, URL template and key header,
--     each as a digest). A claim is sent again only where this config's
--     provider sends to the same place.
--   claim_lookup_id: the same of the provider's lookup then (NULL: it had
--     none). A lookup that asks elsewhere cannot say "has nothing".
-- NULL: never claimed, or claimed before this migration (such a claim is
-- not sent again; its lookups and grace are as before). Only an operation
-- with a provider records them.
ALTER TABLE operations ADD COLUMN claim_apply_by BIGINT
    CONSTRAINT operations_claim_apply_by_check CHECK (claim_apply_by IS NULL OR provider IS NOT NULL);
ALTER TABLE operations ADD COLUMN claim_dispatch_id TEXT
    CONSTRAINT operations_claim_dispatch_id_check CHECK (claim_dispatch_id IS NULL OR (provider IS NOT NULL AND length(claim_dispatch_id) BETWEEN 1 AND 1024));
ALTER TABLE operations ADD COLUMN claim_lookup_id TEXT
    CONSTRAINT operations_claim_lookup_id_check CHECK (claim_lookup_id IS NULL OR (provider IS NOT NULL AND length(claim_lookup_id) BETWEEN 1 AND 1024));
