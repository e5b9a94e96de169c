package jsonappend

import (
	"encoding/json"
	"strings"
	"testing"
)

// Strings come out byte for byte as encoding/json writes them.
func TestStringIsEncodingJSONs(t *testing.T) {
	t.Parallel()
	strs := []string{
		"", "plain", `quote " and backslash \`, "<script>&amp;</script>", "tab\tnew\nline\rreturn\bbell\f",
		"\x00\x01\x1f\x7f", "é ü 東京 😀", "line\u2028para\u2029", "bad \xff\xfe utf-8", "\xe2\x80", strings.Repeat("x", 300),
	}
	for b := range 256 {
		strs = append(strs, string([]byte{byte(b)}), "a"+string([]byte{byte(b)})+"z")
	}
	for _, s := range strs {
		want, _ := json.Marshal(s)
		if got := String(nil, s); string(got) != string(want) {
			t.Errorf("String(%q) = %s, want %s", s, got, want)
		}
	}
}

func FuzzString(f *testing.F) {
	for _, s := range []string{"", "plain", "<&>", "\"\\", "\u2028\u2029", "\xff\xfe", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := String(nil, s); string(got) != string(want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	})
}
