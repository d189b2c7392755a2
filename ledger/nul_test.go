package ledger_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/ledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/postgres/pgtest"
)

// An HTTP API that answers with a NUL character — in the reference of an
// applied call, in the body of a refusal or a 500 — is recorded on both
// ledgers alike, and so is a call whose summary argument holds one. PostgreSQL text cannot hold a NUL: recording failed there,
// and a delivered (or refused) call was left a claim in flight, later an
// unknown for a person.
func TestAnAnswerWithANULIsRecordedOnEveryLedger(t *testing.T) {
	ctx := context.Background()
	answers := map[string]struct {
		code int
		body string
	}{
		"applied": {201, `{"id":"ch_\u00007"}`},
		"failed":  {422, "bad \x00 address"},
		"unknown": {500, "boom \x00"},
		"summary": {201, `{"id":"ch_8"}`},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := answers[r.Header.Get("X-Want")]
		w.WriteHeader(a.code)
		io.WriteString(w, a.body)
	}))
	defer srv.Close()
	doc := `
[[providers]]
name = "api"
kind = "http"
[providers.dispatch]
url = "` + srv.URL + `/send"
ref_pointer = "/id"
headers = { X-Want = "${WANT}" }
[[tools]]
name = "send"
provider = "api"
summary = "to"
arguments = '{"type":"object","properties":{"to":{"type":"string"}}}'
`
	ledgers := []string{t.TempDir() + "/l.db"}
	if os.Getenv(pgtest.Env) != "" {
		ledgers = append(ledgers, pgtest.URL(t))
	}
	for _, where := range ledgers {
		for want, a := range answers {
			cfg, err := config.Parse("tools.toml", []byte(doc), func(string) (string, bool) { return want, true })
			if err != nil {
				t.Fatal(err)
			}
			l, err := ledger.OpenConfig(ctx, where, cfg, ledger.ConfigOptions{Use: ledger.Dispatching, Store: store.Options{Create: true}})
			if err != nil {
				t.Fatal(err)
			}
			args, state := `{"to":"x"}`, want
			if want == "summary" {
				args, state = `{"to":"x\u0000y"}`, "applied"
			}
			res, err := l.Call(ctx, "acme", "k-"+want, "send", json.RawMessage(args))
			op, gerr := l.Get(ctx, "acme", "k-"+want)
			l.Close()
			if gerr != nil || string(op.State) != state {
				t.Errorf("%s, HTTP %d %q, arguments %s: %s (%v; call %+v %v); want %s, recorded", l.Store().Path(), a.code, a.body, args, stateOf(op), gerr, res, err, state)
			}
		}
	}
}

func stateOf(op *model.Operation) model.State {
	if op == nil {
		return ""
	}
	return op.State
}
