package apptest

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) Helper() {}

func TestCheckResponseCatchesContractBreaks(t *testing.T) {
	cases := []struct {
		name   string
		path   string
		status int
		body   string
		breaks bool
	}{
		{"documented body", "/api/auth/workspace", 200, `{"workspace_name":"S","is_setup_complete":true}`, false},
		{"missing required field", "/api/auth/workspace", 200, `{"workspace_name":"S"}`, true},
		{"wrong field type", "/api/auth/workspace", 200, `{"workspace_name":1,"is_setup_complete":true}`, true},
		{"undocumented status", "/api/auth/workspace", 418, `{"error":"teapot"}`, true},
		{"error body without error", "/api/auth/me", 401, `{"message":"no"}`, true},
		{"documented error", "/api/auth/me", 401, `{"error":"no"}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, "http://x"+c.path, nil)
			resp := &http.Response{StatusCode: c.status, Header: http.Header{"Content-Type": {"application/json"}}}
			rec := &recorder{TB: t}
			checkResponse(rec, req, resp, []byte(c.body))
			if got := len(rec.errs) > 0; got != c.breaks {
				t.Errorf("breaks = %v, want %v (%s)", got, c.breaks, strings.Join(rec.errs, "; "))
			}
		})
	}
}
