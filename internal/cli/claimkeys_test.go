package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/ledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// The reviewer's repro, without the kill: a claim made through a config
// where provider pay does not honour keys, its lease ended; a sweep with a
// config where it does re-sends nothing, and says why.
func TestSweepFromAnotherConfigSaysWhyItDidNotResend(t *testing.T) {
	dir := t.TempDir()
	db, pdb := filepath.Join(dir, "ledger.db"), filepath.Join(dir, "provider.db")
	cfgFile := func(name string, honours bool) string {
		p := filepath.Join(dir, name)
		doc := `[[providers]]
name = "pay"
kind = "sandbox"
honours_keys = ` + map[bool]string{true: "true", false: "false"}[honours] + `

[[tools]]
name = "charge"
payload_version = 1
provider = "pay"
arguments = '{"type":"object","properties":{"to":{"type":"string"}},"required":["to"]}'
`
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p, pidem := cfgFile("p.toml", false), cfgFile("pidem.toml", true)
	claimKilled(t, db, pdb, p)
	time.Sleep(5 * time.Millisecond) // the lease (0) ends
	out, errText, code := cli(t, "sweep", "--db", db, "--provider-db", pdb, "--config", pidem)
	if code != 0 || !strings.Contains(out, "1 lease(s) ended → unknown, 0 re-dispatched") ||
		!strings.Contains(out, "not re-sent: 1 of those lease(s), made unknown instead — the claim was made by a config where provider pay does not honour downstream keys") {
		t.Fatalf("sweep: exit %d\n%s%s", code, out, errText)
	}
	out, _, _ = cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", "k1", "--json")
	if !strings.Contains(out, `"state": "unknown"`) || !strings.Contains(out, `"claim_honours_keys": false`) {
		t.Errorf("ops show --json after the sweep: %s", out)
	}
}

// claimKilled claims acme/k1 (tool charge, provider pay, a lease of 0)
// through the config at cfgPath, as a worker killed right after its claim
// would leave it: claimed, nothing sent, nothing answered.
func claimKilled(t *testing.T, db, pdb, cfgPath string) {
	t.Helper()
	cfg, err := config.Load(cfgPath, os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	l, err := ledger.OpenConfig(ctx, db, cfg, ledger.ConfigOptions{ProviderDB: pdb, Use: ledger.Dispatching, Store: store.Options{Create: true}})
	if err != nil {
		t.Fatal(err)
	}
	err = l.Store().WithTx(ctx, func(tx store.Tx) error {
		pr, err := cfg.Tools.Prepare(model.Request{Tenant: "acme", Key: "k1", Tool: "charge", PayloadVersion: 1, Args: []byte(`{"to":"x"}`)})
		if err != nil {
			return err
		}
		_, err = l.Service().ClaimTx(tx, pr, "pay", 0, tx.Now())
		return err
	})
	l.Close()
	if err != nil {
		t.Fatal(err)
	}
}
