package ledger_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/ledger"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/provider/httpapi"
	"github.com/retrysafe/retrysafe/provider/sandbox"
	"github.com/retrysafe/retrysafe/store"
)

// A local tool: its effect is a row in the program's own table, written in
// the ledger's transaction. The same key replays the receipt; it never
// inserts a second row.
func Example() {
	dir, _ := os.MkdirTemp("", "ledger-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	l, err := ledger.Open(ctx, filepath.Join(dir, "ledger.db"), ledger.Options{
		Schema: []string{`CREATE TABLE IF NOT EXISTS tickets (id INTEGER PRIMARY KEY, tenant TEXT, title TEXT)`},
		Tools: []ledger.Tool{{
			Name:    "open_ticket",
			Summary: "title",
			Schema:  `{"type":"object","properties":{"title":{"type":"string","minLength":1}},"required":["title"]}`,
			Local: func(tx ledger.Tx, c ledger.LocalCall) (json.RawMessage, error) {
				res, err := tx.Exec(`INSERT INTO tickets (tenant, title) VALUES (?, ?)`, c.Tenant, c.Args["title"])
				if err != nil {
					return nil, err
				}
				id, _ := res.LastInsertId()
				return json.Marshal(map[string]int64{"ticket_id": id})
			},
		}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()

	for range 2 {
		res, err := l.Call(ctx, "acme", "call-7f3a", "open_ticket", json.RawMessage(`{"title":"printer on fire"}`))
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(res.Class, res.Receipt.Status, string(res.Receipt.Result))
	}
	res, _ := l.Call(ctx, "acme", "call-7f3a", "open_ticket", json.RawMessage(`{"title":"another printer"}`))
	fmt.Println(res.Class)
	_, err = l.Call(ctx, "acme", "call-8", "open_ticket", json.RawMessage(`{"title":""}`))
	fmt.Println(ledger.IsInvalid(err), err)
	// Output:
	// done created {"effect":{"ticket_id":1},"status":"created"}
	// done replayed {"effect":{"ticket_id":1},"status":"created"}
	// conflict
	// true open_ticket: argument title: must not be empty
}

// An external tool: the effect happens at a provider (here the in-process
// sandbox, which honours downstream keys), in two phases under a
// downstream key that is persisted before anything is sent.
func Example_provider() {
	dir, _ := os.MkdirTemp("", "ledger-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	sb, _ := sandbox.Open(filepath.Join(dir, "provider.db"))
	defer sb.Close()

	l, err := ledger.Open(ctx, filepath.Join(dir, "ledger.db"), ledger.Options{
		Providers: []provider.Provider{sb.Provider("mail", true)},
		Tools: []ledger.Tool{{
			Name:     "send_email",
			Summary:  "to",
			Schema:   `{"type":"object","properties":{"to":{"type":"string"},"body":{"type":"string"}},"required":["to","body"]}`,
			Provider: "mail",
		}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()
	for range 2 {
		res, _ := l.Call(ctx, "acme", "mail-1", "send_email", json.RawMessage(`{"to":"a@example.com","body":"hi"}`))
		fmt.Println(res.Class, res.Receipt.Status, res.Receipt.ProviderRef)
	}
	// Output:
	// done created sbx_1
	// done replayed sbx_1
}

// An outcome nobody knows (the API answered 500) stays unknown until a
// person decides; asking the provider by downstream key is the evidence.
func ExampleLedger_MarkApplied() {
	dir, _ := os.MkdirTemp("", "ledger-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "GET" { // the lookup: the API did take it
			fmt.Fprint(w, `{"id":"pay_9"}`)
			return
		}
		w.WriteHeader(500) // …but its reply to the request said nothing useful
	}))
	defer api.Close()
	pay, _ := httpapi.New(httpapi.Config{Name: "payments", Timeout: 2 * time.Second,
		Dispatch: httpapi.Endpoint{URL: api.URL + "/charges", RefPointer: "/id"},
		Lookup:   &httpapi.Endpoint{URL: api.URL + "/charges/{downstream_key}", RefPointer: "/id"}})

	l, err := ledger.Open(ctx, filepath.Join(dir, "ledger.db"), ledger.Options{
		Providers: []provider.Provider{pay},
		Tools: []ledger.Tool{{Name: "charge", Summary: "amount", Provider: "payments",
			Schema: `{"type":"object","properties":{"amount":{"type":"integer","minimum":1}},"required":["amount"]}`}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()
	res, _ := l.Call(ctx, "acme", "order-42", "charge", json.RawMessage(`{"amount":1999}`))
	fmt.Println(res.Class)
	ev, err := l.Check(ctx, "acme", "order-42")
	fmt.Println(ev.Found, ev.Ref, err)
	err = l.MarkApplied(ctx, ledger.Decision{Tenant: "acme", Key: "order-42", Operator: "dana",
		Reason: "the API holds the charge", Evidence: ev.Ref})
	fmt.Println(err)
	res, _ = l.Call(ctx, "acme", "order-42", "charge", json.RawMessage(`{"amount":1999}`))
	fmt.Println(res.Class, res.Receipt.Status, res.Receipt.ProviderRef)
	// Output:
	// unknown
	// true pay_9 <nil>
	// <nil>
	// done replayed pay_9
}

// The command line's ledger, opened from Go: the tools and providers of a
// config registry (config.Default here; config.Resolve reads --config's
// file), the sandbox provider's file beside the ledger. An operator's look
// opens it again with its providers only asked.
func ExampleOpenConfig() {
	dir, _ := os.MkdirTemp("", "ledger-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	where := filepath.Join(dir, "retrysafe.db")

	l, err := ledger.OpenConfig(ctx, where, config.Default(), ledger.ConfigOptions{
		Use: ledger.Dispatching, Store: store.Options{Create: true}})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, _ := l.Call(ctx, "acme", "n-1", "send_notification", json.RawMessage(`{"to":"oncall@example.com","body":"disk full"}`))
	fmt.Println(res.Class, res.Receipt.Status, res.Receipt.ProviderRef, filepath.Base(l.ProviderDB()))
	l.Close()

	l, err = ledger.OpenConfig(ctx, where, config.Default(), ledger.ConfigOptions{Use: ledger.LookupsOnly})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()
	ev, err := l.Check(ctx, "acme", "n-1")
	fmt.Println(ev.Found, ev.Ref, err)
	// Output:
	// done created sbx_1 retrysafe.provider.db
	// true sbx_1 <nil>
}
