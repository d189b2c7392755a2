package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/internal/textsafe"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// The pager file is what a person reads in less: every control, C1 and
// bidirectional character of stored text is escaped in it (not only the C0
// ones encoding/json escapes — U+009B is a CSI to a terminal, U+202E
// reverses the line), and it decodes to the same operation. A tenant name
// that may not be part of a file name ("eu/acme", or 128 characters of 3
// bytes each, over a file name's 255) still gets its file.
func TestPagerFileEscapesEveryUnsafeCharacterForAnyTenant(t *testing.T) {
	hostile := "\u009b2J \u202eevil\u202c \u2066x\u2069 \x7f \u200b \x1b]0;pwned\x07"
	for _, tenant := range []string{"acme", "eu/acme", "..", "a*b", strings.Repeat("漢", model.MaxTenantLen)} {
		t.Run(tenant, func(t *testing.T) {
			d := &model.Detail{
				Operation: model.Operation{Tenant: tenant, Key: "k" + hostile, Summary: hostile,
					Args: json.RawMessage(`{"subject":"` + "\u009b\u202e" + `"}`)},
				Attempts: []model.Attempt{{Seq: 1, Error: hostile}},
			}
			msg := writePagerFile(d)().(pagerFileMsg)
			if msg.Err != nil {
				t.Fatalf("no pager file for tenant %q: %v", tenant, msg.Err)
			}
			defer os.Remove(msg.Path)
			b, err := os.ReadFile(msg.Path)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range string(b) {
				if r != '\n' && textsafe.Unsafe(r) {
					t.Fatalf("a raw %U in the pager file:\n%s", r, b)
				}
			}
			var got model.Detail
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if got.Operation.Summary != d.Operation.Summary || got.Operation.Key != d.Operation.Key ||
				!reflect.DeepEqual(got.Attempts, d.Attempts) {
				t.Fatalf("the pager file changed the text: %+v", got)
			}
			var args map[string]string
			if err := json.Unmarshal(got.Operation.Args, &args); err != nil || args["subject"] != "\u009b\u202e" {
				t.Fatalf("arguments %s: %v", got.Operation.Args, err)
			}
		})
	}
}

// The JSON Lines export escapes them as the pager file does: a person
// reads it with cat or less.
func TestJSONLinesExportEscapesEveryUnsafeCharacter(t *testing.T) {
	l := newLedger(t)
	subject := "\u009b2J \u202eevil\u202c \x1b]0;pwned\x07"
	l.task(t, "acme", "hostile", subject)
	var out bytes.Buffer
	f, err := os.CreateTemp(t.TempDir(), "export-*.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := writeExport(context.Background(), l.st, store.ListQuery{}, f, "jsonl"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	out.Write(b)
	for _, r := range out.String() {
		if r != '\n' && textsafe.Unsafe(r) {
			t.Fatalf("a raw %U in the export:\n%s", r, b)
		}
	}
	var op model.Operation
	if err := json.Unmarshal(bytes.TrimSpace(b), &op); err != nil || op.Summary != subject {
		t.Fatalf("the export changed the text: %v %q", err, op.Summary)
	}
}
