package main

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
)

// applySecrets: for a session with secrets, a request carrying a placeholder (`{{` or `%7B%7B`) in
// its path or in a header a secret is bound to goes to the controller, which refuses it (403,
// `refusal: secret`) or answers the new values of those headers; the gateway replaces them in the
// request it forwards. The controller decides by host, port, method and path
// (src/egress/secret-decision.ts); a request without a placeholder is not asked about. Fields are
// percent-encoded: `%`, spaces, controls and non-ASCII, so decoding gives back the exact header
// value and the exact request target, with its own encoding (`%3F` stays an encoded `?`, never
// the start of a query); `-` is a missing header.
// False when the request was refused (the answer and the record are written).
func (g *gateway) applySecrets(w http.ResponseWriter, r *http.Request, rec *record) bool {
	names := g.cfg.SecretHeaders
	if len(names) == 0 {
		return true
	}
	path := r.URL.RequestURI()
	found := hasPlaceholder(path)
	values := make([]string, len(names))
	for i, name := range names {
		vs := r.Header.Values(name)
		if len(vs) == 0 {
			values[i] = "-"
			continue
		}
		v := strings.Join(vs, ", ")
		found = found || hasPlaceholder(v)
		values[i] = escapeField(v)
	}
	if !found {
		return true
	}
	fields := fmt.Sprintf("%s %s %d %s %s", escapeField(r.Method), rec.Host, rec.Port, escapeField(path), strings.Join(values, " "))
	a := g.ctl.ask("s", fields, secretDeadline)
	pairs := answerPairs(a.rest)
	rec.Secret = pairs["warden_secret"]
	if !a.ok {
		if rec.Secret == "" {
			rec.Secret = a.rest + ".-"
		}
		rec.Refusal = "secret"
		g.refuse(w, rec, http.StatusForbidden)
		return false
	}
	for i, name := range names {
		if v, ok := pairs[fmt.Sprintf("warden_secret_%d", i)]; ok {
			r.Header.Del(name)
			r.Header.Set(name, v)
		}
	}
	return true
}

func hasPlaceholder(text string) bool {
	return strings.Contains(text, "{{") || strings.Contains(strings.ToLower(text), "%7b%7b")
}

// escapeField percent-encodes `%` and the bytes that would split the line (space, controls,
// non-ASCII).
func escapeField(text string) string {
	var b strings.Builder
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c <= ' ' || c >= 0x7f || c == '%' {
			fmt.Fprintf(&b, "%%%02X", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

var answerPair = regexp.MustCompile(`([a-z0-9_]+)=(?:"([^"\\]*)"|(\S+))`)

// answerPairs are the `key="value"` / `key=value` pairs of a secret answer (secret-relay.ts
// formatSecretAnswer: values are visible ASCII and space without `"` or `\`).
func answerPairs(text string) map[string]string {
	out := map[string]string{}
	for _, m := range answerPair.FindAllStringSubmatch(text, -1) {
		if m[3] != "" {
			out[m[1]] = m[3]
		} else {
			out[m[1]] = m[2]
		}
	}
	return out
}
