package ofrep

import (
	"net/http"
	"net/http/httptest"
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
