package main

import (
	"context"
	"fmt"
	"io"
)

// workerCommand is the internal subcommand the lab re-executes itself as.
const workerCommand = "__worker"

func runLab(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "retrysafe: lab is not built yet")
	return exitInternal
}

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "retrysafe: demo is not built yet")
	return exitInternal
}

func runWorker(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "retrysafe: worker is not built yet")
	return exitInternal
}
