package model

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gowebpki/jcs"

	"github.com/retrysafe/retrysafe/internal/textsafe"
)

// Limits on what a call may carry.
const (
	MaxTenantLen   = 128
	MaxKeyLen      = 255
	MaxTraceLen    = 255
	MaxArgsBytes   = 64 << 10
	MaxPayloadVers = 1 << 20
	// MaxArgsDepth is how deeply arguments may nest objects and arrays,
	// the arguments object the first level: a schema that refers to itself
	// costs the validator time and memory growing with the square of the
	// depth (9,990 levels fit in 64 KiB and took gigabytes).
	MaxArgsDepth = 64
)

// Request is one call as the caller sent it.
type Request struct {
	Tenant         string
	Key            string
	Tool           string
	PayloadVersion int
	Args           []byte // JSON object as sent
	TraceID        string // recorded for tracing; never identity
	WorkerID       string
}

// Prepared is a validated request: canonical args and fingerprint computed.
type Prepared struct {
	Request
	Tool        *Tool
	Canonical   []byte
	Fingerprint string
	Summary     string
	Decoded     map[string]any
	// VersionDefaulted: the caller named no payload version (0), and
	// Prepare gave it the tool's. Such a caller — the gateway, a CLI call
	// without --payload-version — cannot have meant another version than
	// the one an operation under its key was recorded with: see SameRequest.
	VersionDefaulted bool
	// Unchecked, when set, is why this build refuses the request: the
	// tool's current schema, a number a double cannot hold exactly, a
	// tenant or key stacking more than textsafe.MaxMarks combining marks.
	// PrepareRecorded prepared it without those checks, for a retry of a
	// request recorded before the refusal. Such a request may be answered
	// from its operation (a replay, a conflict, "still in progress"),
	// never made: nothing may be created or dispatched from it.
	Unchecked error
	// uncheckedBy is which of those rules refused it (UncheckedWords).
	uncheckedBy uncheckedRule
}

// uncheckedRule is a rule a request recorded by an older build may fail.
type uncheckedRule int

const (
	ruleSchema  uncheckedRule = iota // the tool's arguments changed
	ruleNumbers                      // 70bd91a: a double must hold a number exactly
	ruleMarks                        // 011dc8b: at most 3 stacked combining marks
	ruleDepth                        // arguments nested at most MaxArgsDepth levels
)

// UncheckedWords says, for a request PrepareRecorded prepared, what came
// after its operation was recorded ("the tool's arguments changed"), what
// the request is, which is not made ("arguments the tool no longer
// takes"), and what a new action takes instead.
func (p *Prepared) UncheckedWords() (since, what, instead string) {
	switch p.uncheckedBy {
	case ruleNumbers:
		return "numbers with more precision than a double holds were refused (an older build recorded and sent them rounded)",
			"a number it would send rounded", "its numbers as strings, or as a double holds them"
	case ruleMarks:
		return fmt.Sprintf("tenants and keys stacking more than %d combining marks on one character were refused", textsafe.MaxMarks),
			"a key refused now", "a key this build takes"
	case ruleDepth:
		return fmt.Sprintf("arguments nested more than %d levels deep were refused", MaxArgsDepth),
			"arguments nested deeper than it takes", fmt.Sprintf("arguments nested at most %d levels deep", MaxArgsDepth)
	}
	return "the tool's arguments changed", "arguments the tool no longer takes", "the arguments the tool takes now"
}

// SameRequest reports whether p is the request an operation recorded
// under (tool, version) with fingerprint fp: the same fingerprint; or, for
// a caller that named no payload version (VersionDefaulted), the same tool
// and canonical arguments fingerprinted under the recorded version — the
// operator raised the tool's payload version since, and the caller is
// retrying the very bytes it sent (told "use a new key", it would make
// the effect a second time). p then takes the recorded version and
// fingerprint, so its attempt reads as the operation's. A caller that
// named another version explicitly is another request.
func (p *Prepared) SameRequest(tool string, version int, fp string) bool {
	if p.Fingerprint == fp {
		return true
	}
	if !p.VersionDefaulted || p.Tool == nil || tool != p.Tool.Name || version == p.PayloadVersion {
		return false
	}
	if Fingerprint(tool, version, p.Canonical) != fp {
		return false
	}
	p.PayloadVersion, p.Fingerprint = version, fp
	return true
}

// Prepare validates req against the registry's tool and computes its
// canonical form and fingerprint. It touches nothing: a request that fails
// here must not be written anywhere. A payload version of 0 means the
// tool's.
func (r *Registry) Prepare(req Request) (*Prepared, error) {
	return r.prepare(req, true)
}

// PrepareRecorded prepares req as Prepare does, but without the checks an
// older build did not make, one of which refused it (why): the tool's
// current schema; numbers a double cannot hold exactly (an older build
// fingerprinted them rounded, as RFC 8785 writes them); a tenant or key
// stacking more than textsafe.MaxMarks combining marks; arguments nested
// more than MaxArgsDepth levels (its cost stays linear in their size:
// the schema is not checked). Only to compare
// it with the request an operation recorded under its key
// (Prepared.SameRequest): its fingerprint is the one the older build
// recorded for the very same bytes. A caller retrying the bytes it sent
// must get the operation's answer, not "fix the arguments" — which leads
// to a changed request under a new key, and the effect made a second
// time. The result carries why (Prepared.Unchecked).
func (r *Registry) PrepareRecorded(req Request, why error) (*Prepared, error) {
	if why == nil {
		return nil, Errorf(CodeInternal, "PrepareRecorded needs the refusal")
	}
	p, err := r.prepare(req, false)
	if err != nil {
		return nil, err
	}
	p.Unchecked = why
	switch {
	case unstacked(req.Tenant, req.Key) != nil:
		p.uncheckedBy = ruleMarks
	case ArgsDepth(req.Args) > MaxArgsDepth:
		p.uncheckedBy = ruleDepth
	case checkNumbers(p.Decoded, "", true) != nil:
		p.uncheckedBy = ruleNumbers
	}
	return p, nil
}

// prepare is Prepare (strict) or PrepareRecorded's checks (not strict:
// neither the tool's schema, nor exact numbers, nor unstacked marks, nor
// the depth limit).
func (r *Registry) prepare(req Request, strict bool) (*Prepared, error) {
	if err := ValidateIdentity(req.Tenant, req.Key); err != nil {
		return nil, err
	}
	// Only a call is held to this: an operation recorded before it keeps
	// its key, and a person can still open and decide it.
	if strict {
		if err := unstacked(req.Tenant, req.Key); err != nil {
			return nil, err
		}
	}
	if !ValidTraceID(req.TraceID) {
		return nil, Errorf(CodeInvalid, "trace id must be printable UTF-8, at most %d bytes", MaxTraceLen)
	}
	// The worker id is shown on operators' terminals like the trace id.
	if len(req.WorkerID) > MaxTraceLen || !utf8.ValidString(req.WorkerID) || hasControl(req.WorkerID) {
		return nil, Errorf(CodeInvalid, "worker id must be printable UTF-8, at most %d bytes", MaxTraceLen)
	}
	tool, err := r.Lookup(req.Tool)
	if err != nil {
		return nil, err
	}
	defaulted := req.PayloadVersion == 0
	if defaulted {
		req.PayloadVersion = tool.PayloadVersion
	}
	if req.PayloadVersion < 1 || req.PayloadVersion > MaxPayloadVers {
		return nil, Errorf(CodeInvalid, "payload version must be between 1 and %d, got %d", MaxPayloadVers, req.PayloadVersion)
	}
	if !strict {
		canonical, decoded, err := canonicalArgs(req.Args, false)
		if err != nil {
			return nil, err
		}
		return &Prepared{Request: req, Tool: tool, Canonical: canonical, Fingerprint: Fingerprint(tool.Name, req.PayloadVersion, canonical),
			Summary: tool.Summary(decoded), Decoded: decoded, VersionDefaulted: defaulted}, nil
	}
	if e, ok := r.args.get(tool, req.PayloadVersion, req.Args); ok {
		return &Prepared{Request: req, Tool: tool, Canonical: bytes.Clone(e.canonical), Fingerprint: e.fingerprint,
			Summary: e.summary, Decoded: copyJSON(e.decoded).(map[string]any), VersionDefaulted: defaulted}, nil
	}
	canonical, decoded, err := CanonicalArgs(req.Args)
	if err != nil {
		return nil, err
	}
	if err := tool.checkArgs(canonical); err != nil {
		return nil, err
	}
	p := &Prepared{
		Request:     req,
		Tool:        tool,
		Canonical:   canonical,
		Fingerprint: Fingerprint(tool.Name, req.PayloadVersion, canonical),
		Summary:     tool.Summary(decoded),
		Decoded:     decoded,

		VersionDefaulted: defaulted,
	}
	r.args.put(tool, req.PayloadVersion, req.Args, &argsEntry{canonical: p.Canonical, fingerprint: p.Fingerprint, summary: p.Summary, decoded: p.Decoded})
	return p, nil
}

// unstacked refuses a tenant or key stacking more than textsafe.MaxMarks
// combining marks: shown, the rest are escaped (\u0301) and the name reads
// as another name that holds those escapes as text.
func unstacked(tenant, key string) error {
	for _, n := range [][2]string{{"tenant", tenant}, {"key", key}} {
		if !textsafe.Clean(n[1]) {
			return Errorf(CodeInvalid, "%s must not stack more than %d combining marks on one character", n[0], textsafe.MaxMarks)
		}
	}
	return nil
}

// ValidateIdentity checks a (tenant, key) pair.
func ValidateIdentity(tenant, key string) error {
	if err := validateName("tenant", tenant, MaxTenantLen); err != nil {
		return err
	}
	return validateName("key", key, MaxKeyLen)
}

func validateName(what, s string, max int) error {
	switch {
	case s == "":
		return Errorf(CodeInvalid, "%s must not be empty", what)
	case !utf8.ValidString(s):
		return Errorf(CodeInvalid, "%s is not valid UTF-8", what)
	case utf8.RuneCountInString(s) > max:
		return Errorf(CodeInvalid, "%s is %d characters; at most %d", what, utf8.RuneCountInString(s), max)
	case hasControl(s):
		return Errorf(CodeInvalid, "%s must be printable: no control, format or invisible characters", what)
	case s != trimSpace(s):
		return Errorf(CodeInvalid, "%s must not start or end with whitespace", what)
	}
	return nil
}

// ValidateText checks free text a person types into the ledger — a
// decision's reason and evidence, an operator's name: valid UTF-8 on one
// line, without control, format or bidirectional characters (which would
// act on, or lie to, the terminal of the next person who reads it), at most
// max bytes. The command line and the console refuse through it alike.
func ValidateText(what, s string, max int) error {
	switch {
	case !utf8.ValidString(s):
		return Errorf(CodeInvalid, "%s is not valid UTF-8", what)
	case !textsafe.Clean(s):
		return Errorf(CodeInvalid, "%s must be printable text on one line: no control, format or bidirectional characters", what)
	case len(s) > max:
		return Errorf(CodeInvalid, "%s is %d bytes; at most %d", what, len(s), max)
	}
	return nil
}

func trimSpace(s string) string { return string(bytes.TrimSpace([]byte(s))) }

// ValidTraceID reports whether s may be recorded as a trace id: printable
// UTF-8, at most MaxTraceLen bytes. What a request is refused for, and what
// the gateway drops from optional metadata instead of refusing the call.
func ValidTraceID(s string) bool {
	return len(s) <= MaxTraceLen && utf8.ValidString(s) && !hasControl(s)
}

func hasControl(s string) bool {
	for _, r := range s {
		if unicode.IsControl(r) || r == utf8.RuneError || !unicode.IsPrint(r) && r != ' ' {
			return true
		}
	}
	return false
}

// CanonicalArgs checks that raw is one JSON object within the size limit and
// returns its RFC 8785 (JCS) canonical form and its decoded value.
func CanonicalArgs(raw []byte) ([]byte, map[string]any, error) {
	return canonicalArgs(raw, true)
}

// canonicalArgs is CanonicalArgs; exact false takes a number a double
// cannot hold exactly, canonical as the double's (what builds before
// 70bd91a recorded), for PrepareRecorded only.
func canonicalArgs(raw []byte, exact bool) ([]byte, map[string]any, error) {
	if len(raw) > MaxArgsBytes {
		return nil, nil, Errorf(CodeInvalid, "arguments are %d bytes; at most %d (64 KiB)", len(raw), MaxArgsBytes)
	}
	if !utf8.Valid(raw) {
		return nil, nil, Errorf(CodeInvalid, "arguments are not valid UTF-8")
	}
	// Before anything reads them as JSON: the schema's validation, and
	// the wording of its refusal, cost the square of the depth.
	if d := ArgsDepth(raw); exact && d > MaxArgsDepth {
		return nil, nil, Errorf(CodeInvalid, "arguments are nested %d levels deep (objects and arrays); at most %d", d, MaxArgsDepth)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, nil, Errorf(CodeInvalid, "arguments are not valid JSON: %v", syntaxWhy(raw, err))
	}
	if dec.More() {
		return nil, nil, Errorf(CodeInvalid, "arguments must be one JSON object, found trailing data")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, nil, Errorf(CodeInvalid, "arguments must be a JSON object, got %s", jsonKind(v))
	}
	if err := checkNumbers(obj, "", exact); err != nil {
		return nil, nil, err
	}
	canonical, err := jcs.Transform(raw)
	if err != nil {
		return nil, nil, Errorf(CodeInvalid, "arguments cannot be canonicalized: %v", err)
	}
	return canonical, obj, nil
}

// ArgsDepth is how deeply raw, JSON, nests objects and arrays (an object
// holding only numbers and strings is 1), read in one pass over the bytes
// (brackets inside strings do not count) — linear whatever the depth, and
// meaningful for valid JSON only.
func ArgsDepth(raw []byte) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range raw {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

// checkNumbers refuses numbers an IEEE double cannot hold exactly enough to
// give them one spelling: beyond ±2^53 two different integers would share a
// fingerprint; and a literal whose exact decimal value is not the double's
// (10.000000000000001 is read as 10.000000000000002) would be recorded and
// sent as another number than the one asked for, and two different
// literals would share a fingerprint (exact false skips this test). at is
// the number's path (dotted, [i] for an array's elements), for the
// refusal.
func checkNumbers(v any, at string, exact bool) error {
	var path []string
	if at != "" {
		path = append(path, at)
	}
	return checkNumbersAt(v, &path, exact)
}

// checkNumbersAt is checkNumbers with the path as its segments (".name",
// "[i]"), joined only for a refusal: joined at every level, deep
// arguments would cost the square of their depth.
func checkNumbersAt(v any, path *[]string, exact bool) error {
	at := func() string { return pathText(*path) }
	switch x := v.(type) {
	case map[string]any:
		for name, e := range x {
			*path = append(*path, "."+name)
			if err := checkNumbersAt(e, path, exact); err != nil {
				return err
			}
			*path = (*path)[:len(*path)-1]
		}
	case []any:
		for i, e := range x {
			*path = append(*path, "["+strconv.Itoa(i)+"]")
			if err := checkNumbersAt(e, path, exact); err != nil {
				return err
			}
			*path = (*path)[:len(*path)-1]
		}
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return Errorf(CodeInvalid, "number %s at %q is out of range", clipNumber(x), clipText(at(), 80))
		}
		// The test is on the double, not the literal, so every spelling of a
		// number is accepted or refused alike; from 2^53 on, neighbouring
		// integers share one double (2^53+1 becomes 2^53), and past 2^63 an
		// int64 conversion would overflow.
		if math.Abs(f) >= 1<<53 {
			return Errorf(CodeInvalid, "number %s at %q is beyond ±(2^53-1), where different integers share one double and cannot be fingerprinted apart; send it as a string", clipNumber(x), clipText(at(), 80))
		}
		short := strconv.FormatFloat(f, 'g', -1, 64)
		if exact && !sameDecimal(string(x), short) {
			return Errorf(CodeInvalid, "number %s at %q has more precision than a double holds (it would be recorded and sent as %s); send it as a string", clipNumber(x), clipText(at(), 80), short)
		}
	}
	return nil
}

// pathText is a number's path, its segments joined: "a.b[2]".
func pathText(segs []string) string {
	return strings.TrimPrefix(strings.Join(segs, ""), ".")
}

// clipNumber is a number literal short enough for one line of a refusal.
func clipNumber(n json.Number) string { return clipText(string(n), 40) }

func clipText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max - 3
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// sameDecimal reports whether two JSON number literals have exactly the
// same decimal value (1.0, 1e0, 10E-1 and 1 do). It compares digits and
// exponents, not big.Rat values: an exponent of a million digits' worth
// costs nothing here.
func sameDecimal(a, b string) bool {
	na, da, ea, oka := decimalForm(a)
	nb, db, eb, okb := decimalForm(b)
	return oka && okb && na == nb && da == db && ea == eb
}

// decimalForm is a number literal as value = ±0.digits × 10^exp, digits
// without leading or trailing zeros (zero: no digits, exponent 0, never
// negative). ok false for an exponent too large to compare.
func decimalForm(s string) (neg bool, digits string, exp int64, ok bool) {
	if strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	} else {
		s = strings.TrimPrefix(s, "+")
	}
	mant := s
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant = s[:i]
		e, err := strconv.ParseInt(s[i+1:], 10, 64)
		if err != nil || e > 1<<40 || e < -(1<<40) {
			exp, ok = 0, false
		} else {
			exp, ok = e, true
		}
	} else {
		ok = true
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits = intPart + frac
	exp += int64(len(intPart))
	trimmed := strings.TrimLeft(digits, "0")
	exp -= int64(len(digits) - len(trimmed))
	digits = strings.TrimRight(trimmed, "0")
	if digits == "" {
		return false, "", 0, true // zero, whatever its exponent
	}
	return neg, digits, exp, ok
}

// Fingerprint hashes (tool, payload version, canonical args). It detects
// changed intent under one key; it is never the key.
func Fingerprint(tool string, payloadVersion int, canonical []byte) string {
	h := sha256.New()
	h.Write([]byte(tool))
	h.Write([]byte{0})
	h.Write([]byte(strconv.Itoa(payloadVersion)))
	h.Write([]byte{0})
	h.Write(canonical)
	return hex.EncodeToString(h.Sum(nil))
}
