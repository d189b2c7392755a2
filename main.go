// Command retrysafe makes an AI agent's write tools safe to call again and
// gives the on-call engineer a console to settle what nobody knows.
//
// main.go is wiring only: the commands live in internal/cli, the rules in
// reconcile, the SQL in store, the screens in ui.
package main

import (
	"os"

	"github.com/retrysafe/retrysafe/internal/cli"
)

func main() {
	os.Exit(cli.Run(os.Args[1:], os.Stdout, os.Stderr))
}
