package apptest

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strings"
	"testing"
)

// An NDJSON body is checked line by line against the document's schema for
// each line, gzip-encoded or not.
func TestCheckResponseChecksEveryNDJSONLine(t *testing.T) {
	const good = `{"id":1,"flag_key":"f","user_id":null,"value":"v","context":null,"evaluated_at":"2026-03-10T12:00:00Z"}`
	gz := func(s string) []byte {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		_, _ = zw.Write([]byte(s))
		_ = zw.Close()
		return b.Bytes()
	}
	cases := []struct {
		name   string
		body   []byte
		gzip   bool
		breaks bool
	}{
		{"lines of the schema", []byte(good + "\n" + good + "\n"), false, false},
		{"empty", nil, false, false},
		{"gzip", gz(good + "\n"), true, false},
		{"a line missing a member", []byte(good + "\n" + `{"id":2,"flag_key":"f","value":"v","context":null,"evaluated_at":"2026-03-10T12:00:00Z"}` + "\n"), false, true},
		{"a member of the wrong type", []byte(strings.Replace(good, `"id":1`, `"id":"1"`, 1) + "\n"), false, true},
		{"no final newline", []byte(good), false, true},
		{"not JSON", []byte("{\n"), false, true},
		{"gzip of a broken line", gz(`{"id":1}` + "\n"), true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, "http://x/api/environments/6f1c2f7e-3b6d-4c1e-9a51-6f5d7c2b9e10/impressions/export?from=2026-03-10T00:00:00Z&to=2026-03-11T00:00:00Z", nil)
			resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {ndjson}}}
			if c.gzip {
				resp.Header.Set("Content-Encoding", "gzip")
			}
			rec := &recorder{TB: t}
			checkResponse(rec, req, resp, c.body)
			if got := len(rec.errs) > 0; got != c.breaks {
				t.Errorf("breaks = %v, want %v (%s)", got, c.breaks, strings.Join(rec.errs, "; "))
			}
		})
	}
}
