package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/retrysafe/retrysafe/lab"
	"github.com/retrysafe/retrysafe/ledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/ui"
)

// runConsole opens the operations console: `retrysafe [--db FILE]
// [--tenant T] [--operator NAME] [--read-only] [--log FILE]`.
func runConsole(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("console", stderr)
	db := fs.String("db", defaultDB(), dbUsage)
	tenant := fs.String("tenant", "", "show only this tenant (t in the console picks another)")
	operator := fs.String("operator", defaultOperator(), "name recorded on every decision (default $USER)")
	pdb := fs.String("provider-db", "", "sandbox provider file the calls used (default beside the ledger); never created to be asked")
	readOnly := fs.Bool("read-only", false, "look without changing anything: no decisions, no lab runs, no provider checks")
	logFile := fs.String("log", "", "append the console's log to FILE (it never writes to the terminal)")
	cfgPath := configFlag(fs)
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	cfg, code, ok := loadConfig(*cfgPath, stderr)
	if !ok {
		return code
	}
	if *tenant != "" {
		if err := model.ValidateIdentity(*tenant, "k"); err != nil {
			return fail(stderr, model.Errorf(model.CodeInvalid, "--tenant: %v", err))
		}
	}
	if err := validOperator(*operator, "decisions record who made them"); err != nil {
		return fail(stderr, err)
	}
	// Read-only opens the ledger with mode=ro and no provider: the sandbox
	// provider's opener creates its schema, so opening it would write. A
	// missing provider file is never created: checks say "cannot tell".
	l, err := openLedger(context.Background(), *db, cfg, opening{providerDB: *pdb, store: store.Options{ReadOnly: *readOnly}, use: ledger.LookupsOnly})
	if err != nil {
		return fail(stderr, err)
	}
	defer l.Close()
	return openConsole(ctx, l, consoleOptions{Tenant: *tenant, Operator: *operator, LogFile: *logFile, ReadOnly: *readOnly,
		CommandFlags: ledgerFlags("", *pdb, *cfgPath)}, stderr)
}

// consoleOptions are what `retrysafe` and `retrysafe demo` hand the console.
type consoleOptions struct {
	Tenant, Operator, LogFile string
	ReadOnly                  bool
	// CommandFlags are the console's --provider-db and --config, for the
	// commands it copies (ui.Config.CommandFlags).
	CommandFlags string
}

// openConsole runs the console over an open ledger until the user quits.
func openConsole(ctx context.Context, l *ledger.Ledger, o consoleOptions, stderr io.Writer) int {
	logger := log.New(io.Discard, "", 0)
	if o.LogFile != "" {
		f, err := os.OpenFile(o.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fail(stderr, model.Wrap(model.CodeUnavailable, err, "cannot open log file %s: %v", o.LogFile, unwrapPath(err)))
		}
		defer f.Close()
		logger = log.New(f, "", log.LstdFlags|log.Lmicroseconds)
	}
	if o.Operator == "" {
		o.Operator = defaultOperator()
	}
	renderer := lipgloss.NewRenderer(os.Stdout)
	if os.Getenv("NO_COLOR") != "" {
		renderer.SetColorProfile(termenv.Ascii)
	}
	cfg := ui.Config{
		Store: l.Store(), Service: l.Service(), Ledger: l.Store().Path(),
		Tenant: o.Tenant, Operator: o.Operator, ReadOnly: o.ReadOnly || l.Store().ReadOnly(),
		Renderer: renderer, Log: logger, Context: ctx, Pager: os.Getenv("PAGER"), Clipboard: os.Stdout,
		CommandFlags: o.CommandFlags,
	}
	// Read-only keeps the Lab screen (it shows the scenarios) but it
	// refuses to run them: they write.
	if exe, err := os.Executable(); err == nil {
		runner := &lab.Runner{Exe: exe, WorkerArgs: []string{workerCommand}, Open: labOpen}
		runner.ProviderDB = l.ProviderDB()
		cfg.Lab, cfg.LabScenarios, cfg.LabTenant = labAt{runner, l.Where()}, lab.Scenarios(), lab.LabTenant
	}
	p := tea.NewProgram(ui.New(cfg), tea.WithAltScreen(), tea.WithMouseCellMotion(), tea.WithContext(ctx))
	final, err := p.Run()
	if m, ok := final.(ui.Model); ok {
		m.Close()
	}
	switch {
	case err == nil, errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil:
		return exitOK
	default:
		fmt.Fprintf(stderr, "retrysafe: console: %s\n", oneLine(err.Error()))
		return exitInternal
	}
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// labAt runs the console's lab scenarios at the ledger's real location: the
// console knows the location it shows (a URL without its password), which
// the worker processes could not open.
type labAt struct {
	*lab.Runner
	where string
}

func (r labAt) RunIn(ctx context.Context, _, tenant, scenarioID string, progress func(lab.Step)) (lab.Row, error) {
	where := r.where
	if where == "" {
		return lab.Row{}, model.Errorf(model.CodeInvalid, "lab: the ledger's location is unknown")
	}
	return r.Runner.RunIn(ctx, where, tenant, scenarioID, progress)
}
