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
