package config

// HTTP is an HTTP provider's settings.
type HTTP struct{}

func parseHTTP(ps providerSpec, at func(...string) func(string, ...any) error, lookupEnv func(string) (string, bool)) (*HTTP, error) {
	return nil, at("kind")("provider %s: kind http is not built yet", ps.Name)
}
