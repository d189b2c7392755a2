package ui

import (
	"regexp"
	"strings"

	"github.com/retrysafe/retrysafe/model"
)

// When the provider cannot tell. "Cannot tell" is no evidence either way,
// and the console must not let it read as "nothing there": a sandbox file
// restored from an older backup answers "cannot tell" for every operation,
// including ones an earlier lookup found delivered. A wrong "not applied"
// here is a second e-mail or payment, so the console (1) names the reason
// on the detail and on every decision form, with what the decision risks,
// and (2) keeps the earlier lookup that said something (found the effect,
// or nothing) as the decision's finding: the later "cannot tell" takes
// nothing back from it — as the ledger's own rule does when it writes.

// cannotTellPrefix is how a recorded "cannot tell" detail starts (the
// provider's error); the console already says "cannot tell" once.
const cannotTellPrefix = "cannot tell: "

// cannotTellNow is why the provider cannot tell about op now — a failed
// check on screen, else a fresh recorded "cannot tell" — or "".
func cannotTellNow(op model.Operation, chk *checkState) string {
	if chk != nil && chk.err != nil && chk.tenant == op.Tenant && chk.key == op.Key {
		return checkErrText(chk.err)
	}
	if f := op.Finding; f != nil && !f.Stale && f.Kind == model.FindingCannotTell {
		return or(cannotTellWhy(f.Detail), "the provider could not be asked")
	}
	return ""
}

// cannotTellWhy is a recorded "cannot tell" detail without its leading
// "cannot tell: ".
func cannotTellWhy(detail string) string {
	return strings.TrimSpace(strings.TrimPrefix(oneLine(detail), cannotTellPrefix))
}

// earlierFinding is the finding that binds a decision when the last
// lookup cannot tell: model.BindingFinding — the rule the ledger applies
// when it writes (reconcile's decideTx over
// store.Tx.LatestConclusiveFinding), so the form asks for the override the
// write would need. nil if there is none, or it is a stale "has nothing",
// or a lookup that found another request under the key (no evidence: the
// write refuses both marks on it, earlierOther says so).
func earlierFinding(providerName string, atts []model.Attempt) *model.Finding {
	if f := model.BindingFinding(providerName, atts); f != nil && !f.Stale && f.Kind != model.FindingHasOther {
		return f
	}
	return nil
}

// earlierOther is the lookup that found another request under the key
// when it binds a decision and is not the latest lookup (a later one could
// not tell): model.BindingFinding from the attempts, or nil.
func earlierOther(op model.Operation, atts []model.Attempt) *model.Finding {
	f := model.BindingFinding(op.Provider, atts)
	if f == nil || f.Kind != model.FindingHasOther || (op.Finding != nil && op.Finding.Seq == f.Seq) {
		return nil
	}
	return f
}

// cannotTellRisk says what a decision risks when the provider cannot tell
// (compact: in one sentence, for a short terminal).
func cannotTellRisk(a model.Action, compact bool) string {
	if compact {
		switch a {
		case model.ActionMarkNotApplied:
			return "If it was sent, the next call sends it a second time."
		case model.ActionAuthorizeKey:
			return "If it was sent, the new key's first call makes it a second time."
		}
		return "If it was not sent, retries replay a receipt for an effect that never happened."
	}
	switch a {
	case model.ActionMarkNotApplied:
		return "It does not mean it was not sent: if it was, the next call sends it a second time. Decide on evidence from elsewhere (the provider's own records), or find the provider file the calls used."
	case model.ActionAuthorizeKey:
		return "It does not mean it was not sent: if it was, the new key's first call makes it a second time."
	}
	return "It does not mean it was sent: if it was not, retries replay a receipt for an effect that never happened."
}

// fileIDWords and lookupFailedWords are the parts of a provider's reason a
// decision form can do without (the detail shows the reason whole): a
// file's random id, and the "provider X lookup failed:" the box says
// otherwise.
var (
	fileIDWords       = regexp.MustCompile(` \(file id [0-9a-f]+\)`)
	lookupFailedWords = regexp.MustCompile(`^provider \S+ lookup failed: `)
	wentBackWords     = regexp.MustCompile(`no longer holds delivery (\S+), the newest this ledger saw it hold for \S+: it went back in time`)
)

// shortWhy is a "cannot tell" reason for a form: without file ids, and at
// most max cells (0: whole), clipped at its end with a pointer to the
// detail, which has it in full.
func shortWhy(why string, max int) string {
	why = fileIDWords.ReplaceAllString(lookupFailedWords.ReplaceAllString(oneLine(why), ""), "")
	if max == 0 || len(why) <= max {
		return why
	}
	if m := wentBackWords.FindStringSubmatch(why); m != nil {
		// ledger/marks.go's reason, said in a few words: what happened
		// and which delivery it lost.
		for _, short := range []string{
			"its file went back in time (restored from an older backup?): " + m[1] + ", the newest delivery this ledger saw there, is gone",
			"its file went back in time (an older backup?): " + m[1] + " is gone",
		} {
			if len(short) <= max {
				return short + " (more on the detail)"
			}
		}
		why = "its file went back in time: " + m[1] + " is gone"
	}
	return truncate(why, max) + " (in full on the detail)"
}

// whyWords is a "cannot tell" reason in a few words, for a review's row.
func whyWords(detail string) string {
	why := cannotTellWhy(detail)
	if wentBackWords.MatchString(why) {
		return "its file went back in time"
	}
	if strings.Contains(why, "is not in this config (--config)") {
		// reconcile's lookup of a provider the console's config does not
		// name (the agents' --config left out).
		return "its provider is not in this config (--config)"
	}
	return or(clipMiddle(shortWhy(why, 0), 40), "no reason given")
}
