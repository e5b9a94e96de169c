package ofrep

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchyard/switchyard/sdkgo/eval"
	"github.com/switchyard/switchyard/server/apperr"
)

// Known paths with another method answer 405 with Allow; unknown paths 404;
// preflights 204 on any path.
func TestRoutes(t *testing.T) {
	h, err := NewHandler(Config{
		Auth: serverKey{}, Flags: fixed{Environment{Flags: eval.Compile(nil), Tag: "t"}},
		Errors: func(w http.ResponseWriter, _ *http.Request, err error) {
			status := map[apperr.Kind]int{apperr.NotFound: 404, apperr.MethodNotAllowed: 405}[apperr.KindOf(err)]
			w.WriteHeader(status)
		},
		Exposures: NewExposures(discard{}, ExposuresConfig{}), TokenSecret: "s",
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		method, path string
		want         int
		allow        string
	}{
		{"GET", "/ofrep/v1/evaluate/flags", 405, "POST, OPTIONS"},
		{"GET", "/ofrep/v1/evaluate/flags/x", 405, "POST, OPTIONS"},
		{"POST", "/ofrep/v1/configuration", 405, "GET, OPTIONS"},
		{"POST", "/ofrep/v1/events", 405, "GET, OPTIONS"},
		{"POST", "/ofrep/v1/evaluate/flags/", 404, ""},
		{"POST", "/ofrep/v1/evaluate/flags/a/b", 404, ""},
		{"GET", "/ofrep/v1/nope", 404, ""},
		{"OPTIONS", "/ofrep/v1/anything", 204, ""},
		{"POST", "/ofrep/v1/evaluate/flags/missing", 404, ""},
		{"POST", "/ofrep/v1/evaluate/flags", 200, ""},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(c.method, c.path, nil))
		if rec.Code != c.want || rec.Header().Get("Allow") != c.allow || rec.Header().Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("%s %s = %d (Allow %q), want %d (Allow %q), with CORS", c.method, c.path, rec.Code, rec.Header().Get("Allow"), c.want, c.allow)
		}
	}
}

// Bad bodies answer OFREP's 400 on both routes, through the fast path's
// fallback; pooled buffers never carry one request's bytes into the next.
func TestInvalidContextAndBufferReuse(t *testing.T) {
	h, err := NewHandler(Config{
		Auth: serverKey{}, Flags: fixed{Environment{Flags: eval.Compile([]eval.Flag{{Key: "f", IsEnabled: true, FlagType: eval.FlagTypeBoolean, Version: 3}}), Tag: "t"}},
		Errors:    func(w http.ResponseWriter, _ *http.Request, err error) { http.Error(w, err.Error(), 500) },
		Exposures: NewExposures(discard{}, ExposuresConfig{}), TokenSecret: "s",
	})
	if err != nil {
		t.Fatal(err)
	}
	post := func(path, body string) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
		return rec.Code, rec.Body.String()
	}
	for _, body := range []string{`[1]`, `{"context":"x"}`, `{"context":{"a":1}`, `{"context":{}} x`, `{"context":{"a":01}}`} {
		code, got := post("/ofrep/v1/evaluate/flags/f", body)
		var e map[string]string
		if err := json.Unmarshal([]byte(got), &e); err != nil || code != 400 || e["key"] != "f" || e["errorCode"] != "INVALID_CONTEXT" || e["errorDetails"] == "" {
			t.Errorf("single %s = %d %s, want 400 INVALID_CONTEXT with the key", body, code, got)
		}
		code, got = post("/ofrep/v1/evaluate/flags", body)
		e = nil
		if err := json.Unmarshal([]byte(got), &e); err != nil || code != 400 || e["errorCode"] != "INVALID_CONTEXT" || len(e) != 2 {
			t.Errorf("bulk %s = %d %s, want 400 INVALID_CONTEXT without a key", body, code, got)
		}
	}
	long := `{"context":{"targetingKey":"` + strings.Repeat("u", 5000) + `"}}`
	for range 3 {
		for _, body := range []string{long, `{"context":{"targetingKey":"v"}}`, ``} {
			code, got := post("/ofrep/v1/evaluate/flags/f", body)
			if want := `{"key":"f","value":true,"reason":"DEFAULT","variant":"true","metadata":{"version":3}}`; code != 200 || got != want {
				t.Errorf("single %.20s… = %d %s, want %s", body, code, got, want)
			}
			code, got = post("/ofrep/v1/evaluate/flags", body)
			if code != 200 || !strings.HasPrefix(got, `{"flags":[{"key":"f","value":true,`) || !strings.HasSuffix(got, `"}]}`) {
				t.Errorf("bulk %.20s… = %d %s", body, code, got)
			}
		}
	}
}
