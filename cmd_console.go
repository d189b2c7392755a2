package main

import (
	"context"
	"fmt"
	"io"
)

// runConsole opens the operations console. (Owned by the console work.)
func runConsole(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "retrysafe: the console is not built yet")
	return exitInternal
}

// consoleOptions are what `retrysafe` and `retrysafe demo` hand the console.
type consoleOptions struct {
	Tenant, Operator, LogFile string
	ReadOnly                  bool
}

// openConsole runs the console over an open ledger until the user quits.
func openConsole(ctx context.Context, l *ledger, o consoleOptions, stderr io.Writer) int {
	fmt.Fprintln(stderr, "retrysafe: the console is not built yet")
	return exitInternal
}
