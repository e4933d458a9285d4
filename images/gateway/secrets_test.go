package main

import (
	"net/url"
	"testing"
)

func TestEscapeFieldRoundTripsHeaderValues(t *testing.T) {
	for _, v := range []string{"Bearer {{TOKEN}}", "a%7B%7Bb", "tab\there", "ünï", ""} {
		got, err := url.PathUnescape(escapeField(v))
		if err != nil || got != v {
			t.Errorf("round trip of %q gave %q (%v)", v, got, err)
		}
	}
	if got := escapeField("/bytes/%3F/../x"); got != "/bytes/%253F/../x" {
		t.Errorf("path escape = %q", got)
	}
}

func TestAnswerPairs(t *testing.T) {
	got := answerPairs(`warden_secret_0="Bearer abc def" warden_secret_1="" warden_secret=use.A.B`)
	want := map[string]string{"warden_secret_0": "Bearer abc def", "warden_secret_1": "", "warden_secret": "use.A.B"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("pairs %v", got)
	}
}

func TestPlaceholders(t *testing.T) {
	for text, want := range map[string]bool{"{{X}}": true, "%7b%7BX": true, "{X}": false, "%7B": false} {
		if hasPlaceholder(text) != want {
			t.Errorf("hasPlaceholder(%q) != %v", text, want)
		}
	}
}
