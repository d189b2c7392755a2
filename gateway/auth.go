package gateway

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/retrysafe/retrysafe/model"
)

// tenantOf is the tenant the request's token maps to (set by authed).
func tenantOf(ctx context.Context) string { return infoOf(ctx).tenant }

// Authenticate maps a presented bearer token to its tenant. A missing,
// malformed, unknown or revoked token is model.CodeInvalid with one
// message for all of them: the answer says nothing about which tokens
// exist.
func (g *Gateway) Authenticate(ctx context.Context, secret string) (string, error) {
	if !model.LooksLikeToken(secret) {
		return "", refused()
	}
	hash := model.HashToken(secret)
	if tenant, ok := g.tokens.get(hash, time.Now()); ok {
		return tenant, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	t, err := g.ledger.TokenByHash(ctx, hash)
	switch {
	case model.IsCode(err, model.CodeNotFound):
		return "", refused()
	case err != nil:
		return "", err
	case t.Revoked():
		return "", refused()
	}
	g.tokens.put(hash, t.Tenant, time.Now())
	return t.Tenant, nil
}

// refused is Authenticate's one answer for every token that is not live
// (made only for a refusal: most requests are let in).
func refused() error {
	return &model.Error{Code: model.CodeInvalid, Msg: "no valid bearer token: send Authorization: Bearer TOKEN (retrysafe tokens create --tenant T)"}
}

// tokenCache remembers tokens found live for a short while, so a busy
// client does not cost a ledger read per request. Only live tokens are
// kept, so a revocation takes effect within the TTL; TTL 0 keeps nothing.
type tokenCache struct {
	ttl     time.Duration
	mu      sync.Mutex
	entries map[string]cachedToken
}

type cachedToken struct {
	tenant string
	until  time.Time
}

// maxCachedTokens bounds the cache; past it, it starts over.
const maxCachedTokens = 10000

func (c *tokenCache) get(hash string, now time.Time) (string, bool) {
	if c.ttl <= 0 {
		return "", false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[hash]
	if !ok || !now.Before(e.until) {
		return "", false
	}
	return e.tenant, true
}

func (c *tokenCache) put(hash, tenant string, now time.Time) {
	if c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= maxCachedTokens {
		c.entries = map[string]cachedToken{}
	}
	c.entries[hash] = cachedToken{tenant: tenant, until: now.Add(c.ttl)}
}

// authed refuses a request without a live token (401, before anything is
// read or written) and puts the token's tenant in its context.
func (g *Gateway) authed(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if g.authenticate(w, r) {
			next(w, r)
		}
	}
}

// authenticate is authed's check: true with the tenant in the request's
// info, else false with the refusal written.
func (g *Gateway) authenticate(w http.ResponseWriter, r *http.Request) bool {
	// Two credentials: whichever one is taken, a proxy in front that
	// checked the other one would have let through another tenant's call.
	if n := len(r.Header.Values("Authorization")); n > 1 {
		newProblem(KindInvalid, "Authorization header given "+strconv.Itoa(n)+" times; send one bearer token; nothing was written").write(w)
		return false
	}
	secret, ok := bearer(r.Header.Get("Authorization"))
	if !ok {
		g.metrics.unauthorized.Inc()
		newProblem(KindUnauthorized, "no bearer token: send Authorization: Bearer TOKEN").write(w)
		return false
	}
	tenant, err := g.Authenticate(r.Context(), secret)
	if err != nil {
		if model.IsCode(err, model.CodeInvalid) {
			g.metrics.unauthorized.Inc()
			newProblem(KindUnauthorized, err.Error()).write(w)
			return false
		}
		noteErr(r.Context(), err)
		p := newProblem(KindBusy, "cannot check the token now: "+err.Error())
		p.RetryAfter = g.retryAfter()
		p.write(w)
		return false
	}
	infoOf(r.Context()).tenant = tenant
	return true
}

// bearer takes the token out of an Authorization header (RFC 6750: the
// scheme is case-insensitive).
func bearer(h string) (string, bool) {
	scheme, tok, ok := strings.Cut(trimOWS(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = trimOWS(tok)
	return tok, tok != ""
}

// trimOWS trims what may surround a header field's value: spaces and tabs
// (RFC 9110's OWS), not every Unicode space — strings.TrimSpace took a
// trailing U+0085 or U+00A0 off a key, which was then recorded under a key
// the client never sent.
func trimOWS(s string) string { return strings.Trim(s, " \t") }
