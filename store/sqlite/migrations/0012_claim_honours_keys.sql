-- Whether the provider of an operation's latest claim honoured downstream
-- keys, in the config of the process that made the claim (1 yes, 0 no):
-- a sweep or retry sends the claim again under the same downstream key
-- only when this and its own config both say so. A sweep run from another
-- config (cron, an operator's older copy) no longer decides alone that a
-- second delivery under the key is harmless. NULL: never claimed (a local
-- call), or claimed before this migration — such a claim is not sent again
-- (reconcile's mayResend). Only an operation with a provider records it.
ALTER TABLE operations ADD COLUMN claim_honours_keys INTEGER
    CHECK (claim_honours_keys IS NULL OR ((claim_honours_keys = 0 OR claim_honours_keys = 1) AND provider IS NOT NULL));
