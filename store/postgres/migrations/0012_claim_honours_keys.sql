-- Whether the provider of an operation's latest claim honoured downstream
-- keys, in the config of the process that made the claim: a sweep or retry
-- sends the claim again under the same downstream key only when this and
-- its own config both say so. A sweep run from another config (cron, an
-- operator's older copy) no longer decides alone that a second delivery
-- under the key is harmless. NULL: never claimed (a local call), or
-- claimed before this migration — such a claim is not sent again
-- (reconcile's mayResend). Only an operation with a provider records it.
ALTER TABLE operations ADD COLUMN claim_honours_keys BOOLEAN
    CONSTRAINT operations_claim_honours_keys_check CHECK (claim_honours_keys IS NULL OR provider IS NOT NULL);
