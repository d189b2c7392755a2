package cli

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// opsDecisions prints the audit log: every operator decision, newest
// first, filtered by tenant, operator and action.
func opsDecisions(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("ops decisions", stderr)
	db := fs.String("db", defaultDB(), dbUsage)
	tenant := fs.String("tenant", "", "only this tenant")
	operator := fs.String("operator", "", "only this operator's decisions")
	action := fs.String("action", "", "only this action: applied, not-applied or new-key (or mark_applied, mark_not_applied, authorize_new_key)")
	limit := fs.Int("limit", 50, "at most N decisions, newest first")
	asJSON := fs.Bool("json", false, "JSON array, stable for scripts")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	q := store.DecisionQuery{Tenant: *tenant, Operator: *operator, Limit: *limit}
	if *action != "" {
		a, err := model.ParseAction(*action)
		if err != nil {
			return fail(stderr, err)
		}
		q.Action = a
	}
	if *limit < 1 || *limit > store.MaxPage {
		return fail(stderr, model.Errorf(model.CodeInvalid, "--limit must be between 1 and %d", store.MaxPage))
	}
	l, err := openLedger(context.Background(), *db, config.Default(), opening{store: store.Options{ReadOnly: true}})
	if err != nil {
		return fail(stderr, err)
	}
	defer l.Close()
	es, err := l.Store().Decisions(ctx, q)
	if err != nil {
		return fail(stderr, err)
	}
	if *asJSON {
		if es == nil {
			es = []model.AuditEntry{}
		}
		return printJSON(stdout, stderr, es)
	}
	if len(es) == 0 {
		fmt.Fprintln(stdout, "no decisions match")
		return exitOK
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "AT\tOPERATOR\tTENANT\tKEY\tACTION\tCHANGE\tEVIDENCE\tREASON")
	for _, e := range es {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s (v%d) → %s\t%s\t%s\n", fmtTime(e.At), show(e.Operator), show(e.Tenant), show(e.Key),
			e.Action.Verb(), e.FromState, e.FromVersion, e.ToState, show(dash(clip(e.Evidence, 40))), show(clip(e.Reason, 60)))
	}
	tw.Flush()
	return exitOK
}
