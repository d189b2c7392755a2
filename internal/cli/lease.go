package cli

import (
	"flag"
	"log/slog"
	"time"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider/httpapi"
	"github.com/retrysafe/retrysafe/reconcile"
)

// leaseMargin is how much longer than the longest provider timeout the
// lease of serve, mcp and sweep must be: the claim's transaction and the
// answer's are inside the lease too.
const leaseMargin = 5 * time.Second

// leaseFlag is --lease of the commands that dispatch for others (serve,
// mcp, sweep); 0 until leaseFor resolves it.
func leaseFlag(fs *flag.FlagSet) *time.Duration {
	return fs.Duration("lease", 0, "how long a dispatch holds its key before a sweep may call it unknown: at least every provider's timeout + 5s (default 30s, or the longest provider timeout + 5s where that is longer)")
}

// leaseFor is the lease a command runs with: --lease as given, which must
// be positive and outlast every provider's timeout by leaseMargin — a
// dispatch is cut at its lease's end and answered "unknown", which a
// server's caller cannot fix — or, not given, reconcile.DefaultLease or
// the longest provider timeout + leaseMargin, whichever is longer. It
// reads the config only, so a refusal opens (and creates) nothing.
func leaseFor(fs *flag.FlagSet, lease time.Duration, cfg *config.Config) (time.Duration, error) {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "lease" })
	if given && lease <= 0 {
		return 0, model.Errorf(model.CodeInvalid, "--lease must be positive, got %v", lease)
	}
	name, longest := longestTimeout(cfg)
	if !given {
		return max(reconcile.DefaultLease, longest+leaseMargin), nil
	}
	if lease < longest+leaseMargin {
		return 0, model.Errorf(model.CodeInvalid, "--lease %v is not longer than provider %s's timeout (%v) by %v: each dispatch to it would be cut at the lease's end and answered unknown; give --lease at least %v (or leave it out: the default outlasts every provider's timeout), or lower the provider's timeout in %s",
			lease, name, longest, leaseMargin, longest+leaseMargin, cfg.File)
	}
	return lease, nil
}

// longestTimeout is the provider whose dispatch may take longest, and how
// long: an HTTP provider's timeout (default httpapi.DefaultTimeout), a
// sandbox's reconcile.DefaultDispatchTimeout.
func longestTimeout(cfg *config.Config) (string, time.Duration) {
	var (
		name    string
		longest time.Duration
	)
	for _, p := range cfg.Providers {
		d := reconcile.DefaultDispatchTimeout
		if p.HTTP != nil {
			d = httpapi.DefaultTimeout
			if p.HTTP.Config.Timeout > 0 {
				d = p.HTTP.Config.Timeout
			}
		}
		if d > longest {
			name, longest = p.Name, d
		}
	}
	return name, longest
}

// warnCallTimeout warns, at startup, when --call-timeout is not longer
// than a provider's timeout: a call's dispatch is waited for only within
// it, so a slower answer from that provider is cut and ends unknown (or,
// with honours_keys, is sent again on the next call).
func warnCallTimeout(log *slog.Logger, cfg *config.Config, callTimeout time.Duration) {
	if name, longest := longestTimeout(cfg); callTimeout <= longest {
		log.Warn("--call-timeout is not longer than a provider's timeout: a dispatch slower than --call-timeout is cut and its outcome is unknown; give --call-timeout more than the provider's timeout",
			"provider", name, "provider_timeout", longest.String(), "call_timeout", callTimeout.String())
	}
}
