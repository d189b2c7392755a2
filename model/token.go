package model

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"time"
)

// Token is a bearer token that lets a caller act for one tenant. The ledger
// keeps only its SHA-256 (Hash) and a Hint to tell tokens apart in a list
// (TokenHint: nothing of the secret); the secret itself is shown once, when
// it is made.
type Token struct {
	ID        int64     `json:"id"`
	Tenant    string    `json:"tenant"`
	Name      string    `json:"name,omitempty"`
	Hash      string    `json:"-"`
	Hint      string    `json:"hint"`
	CreatedAt time.Time `json:"created_at"`
	RevokedAt time.Time `json:"revoked_at,omitzero"`
}

// Revoked reports whether the token no longer opens anything.
func (t Token) Revoked() bool { return !t.RevokedAt.IsZero() }

// tokenPrefix marks retrysafe tokens, so a leaked one is recognisable (and
// secret scanners can match it).
const tokenPrefix = "rst_"

// MaxTokenNameLen bounds a token's name.
const MaxTokenNameLen = 128

// NewToken makes a token for tenant: the secret (256 bits from crypto/rand,
// shown to the person once) and the record the ledger keeps (its hash, never
// the secret).
func NewToken(tenant, name string, now time.Time) (secret string, t Token, err error) {
	if err := ValidateTenant(tenant); err != nil {
		return "", Token{}, err
	}
	if name != "" {
		if err := validateName("token name", name, MaxTokenNameLen); err != nil {
			return "", Token{}, err
		}
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", Token{}, Wrap(CodeInternal, err, "no randomness for a token: %v", err)
	}
	secret = tokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	return secret, Token{Tenant: tenant, Name: name, Hash: HashToken(secret),
		Hint: TokenHint(HashToken(secret)), CreatedAt: now}, nil
}

// TokenHint is how a token is named in lists: "rst_…" and the first 8 hex
// digits of its hash — enough to match a list line to a token one holds
// (HashToken), nothing of the secret. Ledgers made before it stored the
// secret's first characters as the hint: lists show this instead.
func TokenHint(hash string) string {
	if len(hash) > 8 {
		hash = hash[:8]
	}
	return tokenPrefix + "…" + hash
}

// HashToken is what the ledger stores and looks a presented token up by.
// A plain SHA-256 is enough: the secret has 256 bits of entropy, so there is
// nothing for a slow hash to protect against.
func HashToken(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

// LooksLikeToken is a cheap shape check before any lookup.
func LooksLikeToken(secret string) bool {
	return strings.HasPrefix(secret, tokenPrefix) && len(secret) == len(tokenPrefix)+43
}

// ValidateTenant checks a tenant name alone.
func ValidateTenant(tenant string) error { return validateName("tenant", tenant, MaxTenantLen) }
