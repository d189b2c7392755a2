package httpapi

import (
	"strings"
	"testing"
	"time"
)

// maskBodies are 1 MiB response bodies (MaxResponseBytes' default) that
// make the mask work: plain text, escapes everywhere (each one read at
// every pass), and near misses of the secrets as sent, JSON-escaped and
// as mojibake (each read nearly to its end).
func maskBodies(secrets []string) map[string]string {
	fill := func(unit string) string {
		return strings.Repeat(unit, (1<<20)/len(unit)+1)[:1<<20]
	}
	var near strings.Builder
	for _, w := range secrets {
		cut := w[:len(w)-1]
		near.WriteString(cut + " " + asciiJSON(cut) + " " + mojibakeLatin1(cut) + " " + asciiJSON(mojibakeLatin1(cut)) + " ")
	}
	return map[string]string{
		"plain":      fill("the quick brown fox jumps over the lazy dog; "),
		"escapes":    fill(`\u00e9\/%2F\\%c3%a9\"`),
		"near-miss":  fill(near.String()),
		"mixed JSON": fill(`{"error":"invalid credentials","hint":"r\u00e9essayez","path":"\/v1\/send%3Fx"} `),
	}
}

// mojibakeLatin1 is s's UTF-8 bytes read as Latin-1 (the benchmark's
// bodies; the mask's own forms are its business).
func mojibakeLatin1(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteRune(rune(s[i]))
	}
	return b.String()
}

// Masking a 1 MiB body — the most a response is read — with the secrets
// of a request: ASCII ones, and a non-ASCII one besides.
func BenchmarkMask1MiB(b *testing.B) {
	for _, c := range []struct {
		name    string
		secrets []string
	}{
		{"ascii", []string{"ghp/AbCdEf+123/xyz==", "k3y/With+Slash=", "short7", "eu"}},
		{"non-ascii", []string{"ghp/AbCdEf+123/xyz==", "k3y/With+Slash=", "pässwörd-é1", "grüße€Ü/x"}},
	} {
		p := &Provider{secrets: sortSecrets(secretWords(nil, "Bearer lit/eral+Key=9"))}
		for name, body := range maskBodies(c.secrets) {
			b.Run(c.name+"/"+name, func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				start := time.Now()
				for i := 0; i < b.N; i++ {
					_ = p.mask(body, c.secrets)
				}
				b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N)/1000, "ms/body")
			})
		}
	}
}
