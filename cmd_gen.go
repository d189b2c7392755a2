package main

import (
	"context"
	"fmt"
	"io"
)

func runGen(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "retrysafe: gen is not built yet")
	return exitInternal
}
