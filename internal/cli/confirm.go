package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"math/bits"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/internal/textsafe"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
)

// The second confirmation of a decision against a provider's "has it"
// names what it confirms, as an HTTP If-Match names a version: ops show,
// ops check and a bulk --dry-run print a digest of the "has it" findings
// they show (each operation's key, the has-it lookup's number and the
// provider's reference), and --against-finding=DIGEST confirms exactly
// those. A deciding run recomputes it over its operations as they are
// when it starts; another "has it" recorded in between — another
// operator's check, a triage run — changes it, and the run is refused
// whole, nothing written. A bare --against-finding names nothing, so it
// confirms no "has it": a decision against one is refused with the
// digest to give.

// digestLen is how many hex digits of the SHA-256 a digest keeps.
const digestLen = 8

// againstFlag is --against-finding, bare or =DIGEST.
type againstFlag struct {
	set    bool
	digest string
}

func (a *againstFlag) String() string {
	if a == nil || !a.set {
		return ""
	}
	return a.digest
}

// IsBoolFlag lets --against-finding stand alone.
func (a *againstFlag) IsBoolFlag() bool { return true }

func (a *againstFlag) Set(v string) error {
	switch v {
	case "true":
		a.set, a.digest = true, ""
		return nil
	case "false":
		a.set, a.digest = false, ""
		return nil
	}
	v = strings.ToLower(v)
	if len(v) != digestLen {
		return fmt.Errorf("want a digest of %d hex digits (ops show, ops check and --dry-run print it), got %q", digestLen, v)
	}
	if _, err := hex.DecodeString(v); err != nil {
		return fmt.Errorf("want a digest of %d hex digits (ops show, ops check and --dry-run print it), got %q", digestLen, v)
	}
	a.set, a.digest = true, v
	return nil
}

func againstFlagVar(fs *flag.FlagSet, usage string) *againstFlag {
	a := &againstFlag{}
	fs.Var(a, "against-finding", usage)
	return a
}

// hasIt is one operation's "has it" a decision can go against: the
// lookup that binds it (its number and the provider's reference), or an
// applied operation's receipt (Receipt, at its version).
type hasIt struct {
	Tenant, Key string
	Seq         int
	Ref         string
	Receipt     bool
	Version     int64
	By, At      string
}

// hasItOf is op's "has it" (as read with its findings: ops show, a list,
// a bulk run's read), if it has one. A new key not yet used has none of
// its own (its one decision, mark applied, goes with the replaced key's).
func hasItOf(op model.Operation) (hasIt, bool) {
	h := hasIt{Tenant: op.Tenant, Key: op.Key}
	if op.State == model.StateAuthorized {
		return h, false
	}
	if b := op.Binding(); b != nil && b.Kind == model.FindingHasIt {
		h.Seq, h.Ref, h.By = b.Seq, b.Ref, b.By
		if !b.At.IsZero() {
			h.At = b.At.UTC().Format("2006-01-02T15:04:05Z")
		}
		return h, true
	}
	if op.State == model.StateApplied {
		h.Receipt, h.Ref, h.Version = true, op.ProviderRef, op.Version
		return h, true
	}
	return h, false
}

// hasIts is the "has it" of each of ops that has one, in a stable order.
func hasIts(ops []model.Operation) []hasIt {
	var hs []hasIt
	for _, op := range ops {
		if h, ok := hasItOf(op); ok {
			hs = append(hs, h)
		}
	}
	sort.Slice(hs, func(i, j int) bool {
		if hs[i].Tenant != hs[j].Tenant {
			return hs[i].Tenant < hs[j].Tenant
		}
		return hs[i].Key < hs[j].Key
	})
	return hs
}

// digestOf is the digest of hs (in hasIts' order); "" for none.
func digestOf(hs []hasIt) string {
	if len(hs) == 0 {
		return ""
	}
	s := sha256.New()
	for _, h := range hs {
		which := "lookup " + strconv.Itoa(h.Seq)
		if h.Receipt {
			which = "receipt v" + strconv.FormatInt(h.Version, 10)
		}
		fmt.Fprintf(s, "%q %q %s %q\n", h.Tenant, h.Key, which, h.Ref)
	}
	return hex.EncodeToString(s.Sum(nil))[:digestLen]
}

// words is h as a person reads it: "acme/x: has it #7 · sbx_1 (recorded
// … by …)".
func (h hasIt) words() string {
	s := h.Tenant + "/" + h.Key + ": "
	if h.Receipt {
		if h.Ref == "" {
			return s + "applied, its receipt without a reference"
		}
		return s + "applied, its receipt " + h.Ref
	}
	s += fmt.Sprintf("has it (lookup #%d)", h.Seq)
	if h.Ref != "" {
		s += " · " + h.Ref
	}
	if h.At != "" {
		s += ", recorded " + h.At
		if h.By != "" {
			s += " by " + h.By
		}
	}
	return s
}

func hasItList(hs []hasIt) string {
	parts := make([]string, len(hs))
	for i, h := range hs {
		parts[i] = h.words()
	}
	return strings.Join(parts, "; ")
}

// newSince names the "has it" findings among now that the digest seen
// did not cover: the fewest whose removal gives seen (searched for up to
// 12 findings); nil when none can be told (the has-its seen are not all
// there any more: one was looked up again, one moved on).
func newSince(seen string, now []hasIt) []hasIt {
	n := len(now)
	if n == 0 || n > 12 {
		return nil
	}
	best := -1
	for mask := 1; mask < 1<<n; mask++ {
		if best >= 0 && bits.OnesCount(uint(mask)) >= bits.OnesCount(uint(best)) {
			continue
		}
		var kept []hasIt
		for i, h := range now {
			if mask&(1<<i) == 0 {
				kept = append(kept, h)
			}
		}
		if d := digestOf(kept); d == seen || (d == "" && seen == "") {
			best = mask
		}
	}
	if best < 0 {
		return nil
	}
	var out []hasIt
	for i, h := range now {
		if best&(1<<i) != 0 {
			out = append(out, h)
		}
	}
	return out
}

// confirm checks --against-finding against ops as this run read them,
// before anything is asked or written: a digest must be the digest of
// their "has it" findings now; bare, it confirms none — refused when
// action goes against one. retry is the command that confirms them as
// they are now (one key: the refusal shows them whole), "" to send the
// operator back to --dry-run. nil: go on.
func confirm(a *againstFlag, action model.Action, ops []model.Operation, retry func(digest string) string, now time.Time) error {
	if !a.set {
		return nil
	}
	has := hasIts(ops)
	d := digestOf(has)
	again := func() string {
		if retry == nil || d == "" {
			return "look at them again (the same command with --dry-run prints them and their digest)"
		}
		return "look at it (ops show prints it) — to decide against it as it is now: " + retry(d)
	}
	if a.digest == "" {
		var against []hasIt
		for _, op := range ops {
			if is, _ := reconcile.AgainstFinding(action, op); is && action != model.ActionMarkApplied && reconcile.AllowedAt(op, action, now) {
				if h, ok := hasItOf(op); ok {
					against = append(against, h)
				}
			}
		}
		if len(against) == 0 {
			return nil
		}
		return model.Errorf(model.CodeInvalid, "--against-finding does not say which \"has it\" it confirms, and %s: a bare --against-finding confirms none (another operator's check may have recorded it after you looked) — nothing was written; %s",
			hasItList(against), again())
	}
	if a.digest == d {
		return nil
	}
	if d == "" {
		return model.Errorf(model.CodeInvalid, "--against-finding=%s names \"has it\" findings these operations no longer have (none has one now) — nothing was written; look again (ops show, --dry-run) and decide without --against-finding",
			a.digest)
	}
	if added := newSince(a.digest, has); added != nil {
		return model.Errorf(model.CodeStale, "--against-finding=%s confirmed other \"has it\" findings than these operations have now: %s — recorded since you looked; nothing was written; %s",
			a.digest, hasItList(added), again())
	}
	return model.Errorf(model.CodeStale, "--against-finding=%s confirmed other \"has it\" findings than these operations have now (%s): one was recorded, or looked up again, since you looked — nothing was written; %s",
		a.digest, hasItList(has), again())
}

// offer is the line that offers a digest: how to decide against the
// "has it" findings shown, with the command(s) to run. "" for none.
func offer(hs []hasIt, cmds ...string) string {
	d := digestOf(hs)
	if d == "" || len(cmds) == 0 {
		return ""
	}
	what, names := "this \"has it\"", "it"
	if len(hs) > 1 {
		what, names = fmt.Sprintf("these %d \"has it\" findings", len(hs)), "exactly them"
	}
	if len(hs) == 1 && hs[0].Receipt {
		// An applied operation's: no provider finding has it, its
		// receipt does (the ledger's "applied").
		what = "its receipt (the ledger's \"applied\")"
	}
	return fmt.Sprintf("to decide against %s (--against-finding=%s names %s; refused if another is recorded first): %s",
		what, d, names, strings.Join(cmds, "  or  "))
}

// keyFlagsFor is --tenant T --key K for a printed command: a key with @
// in it is named whole, with --expect-version (keyAt).
func keyFlagsFor(op model.Operation) string {
	s := " --tenant " + textsafe.ShellWord(op.Tenant) + " --key " + textsafe.ShellWord(op.Key)
	if strings.Contains(op.Key, "@") {
		s += fmt.Sprintf(" --expect-version %d", op.Version)
	}
	return s
}

// decideCommands are the commands that decide against op's "has it"
// with digest d, for a person to fill in the reason: "not applied" and a
// new key, where op allows them.
func decideCommands(op model.Operation, ledger, d string, now time.Time) []string {
	var cmds []string
	if reconcile.AllowedAt(op, model.ActionMarkNotApplied, now) {
		cmds = append(cmds, "retrysafe ops resolve"+ledger+keyFlagsFor(op)+` --as not-applied --evidence "…" --reason "…" --against-finding=`+d)
	}
	if reconcile.AllowedAt(op, model.ActionAuthorizeKey, now) {
		cmds = append(cmds, "retrysafe ops supersede"+ledger+keyFlagsFor(op)+` --reason "…" --against-finding=`+d)
	}
	return cmds
}

// commandAgain is the command line fs was given, as a person runs it
// again from anywhere: the ledger flags absolute (ledgerFlags), the
// flags set in fs's order, drop and --against-finding left out, tail
// last. keys, when given, are ops resolve's --key values, in the order
// given.
func commandAgain(fs *flag.FlagSet, name, ledger string, keys []string, tail string, drop ...string) string {
	var b strings.Builder
	b.WriteString("retrysafe " + name + ledger)
	skip := map[string]bool{"db": true, "provider-db": true, "config": true, "against-finding": true}
	for _, d := range drop {
		skip[d] = true
	}
	for _, k := range keys {
		b.WriteString(" --key " + textsafe.ShellWord(k))
	}
	fs.Visit(func(f *flag.Flag) {
		if skip[f.Name] || (keys != nil && f.Name == "key") {
			return
		}
		if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
			if f.Value.String() == "true" {
				b.WriteString(" --" + f.Name)
			}
			return
		}
		b.WriteString(" --" + f.Name + " " + textsafe.ShellWord(f.Value.String()))
	})
	b.WriteString(tail)
	return b.String()
}
