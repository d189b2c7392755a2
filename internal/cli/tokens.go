package cli

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/retrysafe/retrysafe/ledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

const tokensUsage = `Usage:
  retrysafe tokens create --tenant T [--name N] [--db FILE|URL] [--json]   make a token; it is printed once
  retrysafe tokens list   [--tenant T] [--db FILE|URL] [--json]
  retrysafe tokens revoke --id N [--db FILE|URL] [--json]
`

// runTokens manages the gateway's bearer tokens. The ledger keeps only a
// token's SHA-256; the token itself is printed once, by create.
func runTokens(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, "retrysafe tokens: which one? create, list or revoke\n\n"+tokensUsage)
		return exitInvalid
	}
	switch args[0] {
	case "create":
		return runTokensCreate(ctx, args[1:], stdout, stderr)
	case "list":
		return runTokensList(ctx, args[1:], stdout, stderr)
	case "revoke":
		return runTokensRevoke(ctx, args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, groupHelp("tokens", tokensUsage))
		return exitOK
	}
	fmt.Fprintf(stderr, "retrysafe tokens: unknown subcommand %q\n%s", args[0], tokensUsage)
	return exitInvalid
}

func runTokensCreate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("tokens create", stderr)
	db := fs.String("db", defaultDB(), dbUsage+"; created if missing")
	tenant := fs.String("tenant", "", "the tenant the token acts for (required)")
	name := fs.String("name", "", "a name to tell the token apart in lists (who or what holds it)")
	asJSON := fs.Bool("json", false, "print the token and its record as JSON")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	// Validated (and the secret made) before the ledger is opened.
	secret, tok, err := model.NewToken(*tenant, *name, time.Time{})
	if err != nil {
		return fail(stderr, err)
	}
	st, err := ledger.OpenStore(*db, store.Options{Create: true})
	if err != nil {
		return fail(stderr, err)
	}
	defer st.Close()
	if err := st.CreateToken(ctx, &tok); err != nil {
		return fail(stderr, err)
	}
	if *asJSON {
		return printJSON(stdout, stderr, struct {
			Secret string      `json:"token"`
			Record model.Token `json:"record"`
		}{secret, tok})
	}
	fmt.Fprintln(stdout, secret)
	fmt.Fprintf(stderr, "token #%d (%s) for tenant %s%s: shown once — the ledger keeps only its hash (revoke: retrysafe tokens revoke --id %d)\n",
		tok.ID, tok.Hint, show(tok.Tenant), show(nameSuffix(tok.Name)), tok.ID)
	return exitOK
}

func nameSuffix(n string) string {
	if n == "" {
		return ""
	}
	return " (" + n + ")"
}

func runTokensList(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("tokens list", stderr)
	db := fs.String("db", defaultDB(), dbUsage)
	tenant := fs.String("tenant", "", "only this tenant's tokens")
	asJSON := fs.Bool("json", false, "print JSON")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	st, err := ledger.OpenStore(*db, store.Options{ReadOnly: true})
	if err != nil {
		return fail(stderr, err)
	}
	defer st.Close()
	toks, err := st.ListTokens(ctx, *tenant)
	if err != nil {
		return fail(stderr, err)
	}
	for i := range toks {
		// From the hash, never a stored hint: older ledgers kept the
		// secret's first characters there.
		toks[i].Hint = model.TokenHint(toks[i].Hash)
	}
	if *asJSON {
		if toks == nil {
			toks = []model.Token{}
		}
		return printJSON(stdout, stderr, toks)
	}
	if len(toks) == 0 {
		fmt.Fprintln(stdout, "no tokens (make one: retrysafe tokens create --tenant T)")
		return exitOK
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTENANT\tNAME\tTOKEN\tCREATED\tREVOKED")
	for _, t := range toks {
		revoked := "-"
		if t.Revoked() {
			revoked = t.RevokedAt.Local().Format("2006-01-02 15:04:05")
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", t.ID, show(t.Tenant), show(dash(t.Name)), t.Hint,
			t.CreatedAt.Local().Format("2006-01-02 15:04:05"), revoked)
	}
	tw.Flush()
	return exitOK
}

func runTokensRevoke(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("tokens revoke", stderr)
	db := fs.String("db", defaultDB(), dbUsage)
	id := fs.Int64("id", 0, "the token's id (see tokens list) (required)")
	asJSON := fs.Bool("json", false, "print the revoked token's record as tokens list --json does")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if *id <= 0 {
		return fail(stderr, model.Errorf(model.CodeInvalid, "--id is required (see retrysafe tokens list)"))
	}
	st, err := ledger.OpenStore(*db, store.Options{})
	if err != nil {
		return fail(stderr, err)
	}
	defer st.Close()
	t, err := st.RevokeToken(ctx, *id)
	if err != nil {
		return fail(stderr, err)
	}
	if *asJSON {
		t.Hint = model.TokenHint(t.Hash) // from the hash, as tokens list says it
		return printJSON(stdout, stderr, t)
	}
	fmt.Fprintf(stdout, "revoked token #%d of tenant %s%s: it opens nothing from now on\n", t.ID, show(t.Tenant), show(nameSuffix(t.Name)))
	return exitOK
}
