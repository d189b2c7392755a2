// Package lab reproduces, for real, the lost responses and crashes of the
// seeds: worker processes (the retrysafe binary re-executed) that die before
// or after commit, replies lost after the provider applied, and the next
// attempt, with the effects counted before → after.
package lab

import (
	"context"
	"errors"
)

// Scenario is one reproducible case.
type Scenario struct {
	ID          string // stable id, e.g. "before-commit-same-key"
	Name        string // one line for people
	FirstCall   string // what the first call does, e.g. "stops before commit"
	NextAttempt string // e.g. "same key, same report"
}

// Step is a progress report while a scenario runs.
type Step struct {
	Scenario string
	Text     string
}

// Row is one scenario's result: the line of the lab's table.
type Row struct {
	Scenario    string   `json:"scenario"`
	Name        string   `json:"name"`
	FirstCall   string   `json:"first_call"`
	NextAttempt string   `json:"next_attempt"`
	Before      int      `json:"effects_before"`
	After       int      `json:"effects_after"`
	Ledger      string   `json:"ledger"`   // what the ledger says, e.g. "applied, 2 attempts"
	Expected    string   `json:"expected"` // e.g. "0 → 1"
	OK          bool     `json:"ok"`
	Tenant      string   `json:"tenant"`
	Keys        []string `json:"keys"` // operations the scenario created, to jump to
	Detail      string   `json:"detail,omitempty"`
}

// Runner runs scenarios.
type Runner struct {
	// Exe is the binary re-executed as worker processes (os.Executable()).
	Exe string
	// WorkerArgs prefix the worker's arguments (the internal subcommand).
	WorkerArgs []string
	// Env is added to the worker's environment (tests set their re-exec switch).
	Env []string
}

// Scenarios lists every scenario, in the table's order.
func Scenarios() []Scenario { return nil }

// RunIn runs one scenario against an existing ledger (the console's Lab
// screen) under tenant, reporting steps as they happen.
func (r *Runner) RunIn(ctx context.Context, ledgerPath, tenant, scenarioID string, progress func(Step)) (Row, error) {
	return Row{}, errors.New("lab: not built yet")
}
