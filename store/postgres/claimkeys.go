package postgres

// claimKeysArg is model.Operation.ClaimHonoursKeys as its column
// (migration 12), a copy: NULL when not recorded.
func claimKeysArg(b *bool) *bool {
	if b == nil {
		return nil
	}
	v := *b
	return &v
}
