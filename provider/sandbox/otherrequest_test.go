package sandbox_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/provider"
)

// The sandbox keeps the tool and arguments of every delivery, so a lookup
// that names the request it asks about is answered about that request:
// a delivery of another tool, or with other arguments, under the same
// downstream key (a copy of the ledger sent it, or a key reused after its
// tombstone was forgotten) is "another request" (Evidence.Other, and
// LookupFor's OtherRequest), never "has it". A lookup by key alone is
// answered as before.
func TestSandboxLookupComparesTheRequestItHolds(t *testing.T) {
	const ours = `{"body":"hi","to":"a@example.com"}`
	type sent struct{ prov, tool, args string }
	cases := []struct {
		name    string
		sent    []sent
		tool    string // the query's ("" = by key alone)
		args    string
		found   bool
		ref     string // found: this request's delivery; other: what is held
		other   string // words Evidence.Other has ("" = none)
		effects int
	}{
		{"nothing", nil, "send_notification", ours, false, "", "", 0},
		{"this-request", []sent{{"sandbox", "send_notification", ours}}, "send_notification", ours, true, "sbx_1", "", 1},
		{"same-json-other-spelling", []sent{{"sandbox", "send_notification", `{ "to": "a@example.com", "body": "hi" }`}}, "send_notification", ours, true, "sbx_1", "", 1},
		{"other-arguments", []sent{{"sandbox", "send_notification", `{"body":"hi","to":"b@example.com"}`}}, "send_notification", ours, false, "sbx_1", "send_notification request with other arguments", 1},
		{"other-tool", []sent{{"sandbox", "charge_card", ours}}, "send_notification", ours, false, "sbx_1", "sbx_1 is a charge_card request, this operation a send_notification one", 1},
		{"other-then-this", []sent{{"sandbox", "send_notification", `{"to":"b@example.com"}`}, {"sandbox", "send_notification", ours}}, "send_notification", ours, true, "sbx_2", "", 2},
		{"arguments-not-json", []sent{{"sandbox", "send_notification", `not json`}}, "send_notification", ours, false, "sbx_1", "other arguments", 1},
		// Another provider name's delivery in the same file is not under
		// this provider's key.
		{"other-provider", []sent{{"sandbox-idem", "send_notification", `{"to":"b@example.com"}`}}, "send_notification", ours, false, "", "", 0},
		// A delivery made in process by a tool named like its provider is
		// compared like any other; one made over HTTP (sandbox serve, not
		// told the tool) is not: TestALookupTellsServeDeliveriesFromAToolNamedLikeItsProvider.
		{"tool-named-like-its-provider", []sent{{"sandbox", "sandbox", `{"recipient":"a@example.com"}`}}, "send_notification", ours, false, "sbx_1", "sbx_1 is a sandbox request, this operation a send_notification one", 1},
		// By key alone: whatever it holds.
		{"by-key-alone", []sent{{"sandbox", "send_notification", `{"to":"b@example.com"}`}}, "", "", true, "sbx_1", "", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			sb, _ := openSandbox(t)
			for _, s := range c.sent {
				if resp, err := sb.Provider(s.prov, false).Dispatch(ctx, provider.Request{DownstreamKey: "dk", Tool: s.tool, Args: []byte(s.args)}); err != nil || resp.Status != provider.Applied {
					t.Fatalf("set-up: %+v %v", resp, err)
				}
			}
			p := sb.Provider("sandbox", false)
			ql, ok := p.(provider.QueryLooker)
			if !ok {
				t.Fatal("the sandbox provider is not a QueryLooker")
			}
			ev, err := ql.LookupQuery(ctx, provider.Query{DownstreamKey: "dk", Tool: c.tool, Args: []byte(c.args)})
			if err != nil {
				t.Fatal(err)
			}
			if ev.Found != c.found || ev.Effects != c.effects || (c.ref != "" && ev.Ref != c.ref) {
				t.Errorf("found %v ref %s effects %d; want %v %s %d (%s)", ev.Found, ev.Ref, ev.Effects, c.found, c.ref, c.effects, ev.Detail)
			}
			if (c.other == "") != (ev.Other == "") || !strings.Contains(ev.Other, c.other) {
				t.Errorf("other %q; want it to say %q", ev.Other, c.other)
			}
			// LookupFor makes another request an error: no evidence to
			// whoever does not read it for what it is.
			ev2, err := provider.LookupFor(ctx, p, provider.Query{DownstreamKey: "dk", Tool: c.tool, Args: []byte(c.args)})
			var other *provider.OtherRequest
			switch {
			case c.other == "" && (err != nil || ev2.Found != c.found):
				t.Errorf("LookupFor: %+v %v; want found %v, no error", ev2, err, c.found)
			case c.other != "" && (!errors.As(err, &other) || ev2.Found || other.Ref != c.ref || other.Provider != "sandbox" ||
				!strings.Contains(err.Error(), "different request under this key") || !strings.Contains(err.Error(), "authorize a new key")):
				t.Errorf("LookupFor: %+v %v; want an OtherRequest naming %s, not found", ev2, err, c.ref)
			}
		})
	}
}
