package model_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/model"
)

// oldFingerprint is the fingerprint every build before 70bd91a recorded
// for these bytes: SHA-256 of tool, version and the RFC 8785 form of the
// bytes as sent — which rounds a number to the nearest double
// (10.000000000000001 became 10.000000000000002) — computed here without
// model, as those builds did.
func oldFingerprint(t *testing.T, tool string, version int, raw string) string {
	t.Helper()
	canonical, err := jcs.Transform([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	h.Write([]byte(tool + "\x00" + strconv.Itoa(version) + "\x00"))
	h.Write(canonical)
	return hex.EncodeToString(h.Sum(nil))
}

// A request this build refuses, but an older one recorded — numbers a
// double cannot hold exactly (before 70bd91a), a key or tenant stacking
// more than 3 combining marks (before 011dc8b): Prepare refuses it as
// always, and PrepareRecorded gives it the fingerprint the older build
// recorded for the very same bytes, so a retry can be compared with its
// operation. It carries the refusal (Unchecked) and says which rule came
// since, so it is answered, never made.
func TestPrepareRecordedFingerprintsWhatAnOlderBuildRecorded(t *testing.T) {
	marks := "k" + strings.Repeat("\u0301", 5)
	cases := []struct {
		name        string
		tenant, key string
		args        string
		refusal     string // Prepare's
		since       string // what PrepareRecorded says came since
	}{
		{"a decimal beyond double precision", "acme", "kb18b1f", `{"subject":"x","amount":10.000000000000001}`,
			"has more precision than a double holds", "numbers"},
		{"a longer spelling of 0.30000000000000004", "acme", "k2", `{"subject":"x","p":0.3000000000000000444}`,
			"has more precision than a double holds", "numbers"},
		{"nested in an array", "acme", "k3", `{"subject":"x","lines":[{"p":1},{"p":0.1000000000000000000001}]}`,
			"has more precision than a double holds", "numbers"},
		{"a key with 5 stacked marks", "acme", marks, `{"subject":"x"}`,
			"must not stack more than 3 combining marks", "combining marks"},
		{"a tenant with 4 stacked marks", "a" + strings.Repeat("\u0301", 4), "k4", `{"subject":"x"}`,
			"must not stack more than 3 combining marks", "combining marks"},
		{"both", "acme", marks, `{"subject":"x","amount":10.000000000000001}`,
			"must not stack more than 3 combining marks", "combining marks"},
	}
	reg := config.Default().Tools
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := model.Request{Tenant: c.tenant, Key: c.key, Tool: "create_support_task", Args: []byte(c.args)}
			_, err := reg.Prepare(req)
			if err == nil || !model.IsCode(err, model.CodeInvalid) || !strings.Contains(err.Error(), c.refusal) {
				t.Fatalf("Prepare: %v; want refused (%s)", err, c.refusal)
			}
			p, err := reg.PrepareRecorded(req, err)
			if err != nil {
				t.Fatalf("PrepareRecorded: %v", err)
			}
			if want := oldFingerprint(t, "create_support_task", 1, c.args); p.Fingerprint != want {
				t.Fatalf("fingerprint %s; an older build recorded %s", p.Fingerprint, want)
			}
			if p.Unchecked == nil || !strings.Contains(p.Unchecked.Error(), c.refusal) {
				t.Fatalf("Unchecked %v; want the refusal", p.Unchecked)
			}
			if since, _, _ := p.UncheckedWords(); !strings.Contains(since, c.since) {
				t.Fatalf("since %q; want it to name %s", since, c.since)
			}
		})
	}
	// What no build ever took stays refused: a number beyond 2^53, bytes
	// that are not one JSON object, a key with a control character.
	for _, req := range []model.Request{
		{Tenant: "acme", Key: "k", Tool: "create_support_task", Args: []byte(`{"subject":"x","n":9007199254740993}`)},
		{Tenant: "acme", Key: "k", Tool: "create_support_task", Args: []byte(`{"subject":"x"} {}`)},
		{Tenant: "acme", Key: "k\x00", Tool: "create_support_task", Args: []byte(`{"subject":"x"}`)},
	} {
		_, why := reg.Prepare(req)
		if p, err := reg.PrepareRecorded(req, why); err == nil {
			t.Errorf("PrepareRecorded(%q, %s) = %s; want refused", req.Key, req.Args, p.Fingerprint)
		}
	}
}
