package httpapi

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/switchyard/switchyard/server/apperr"
)

// rejectUnstorableText refuses requests carrying text PostgreSQL cannot
// store: NUL characters (raw, percent-encoded or as the JSON escape \u0000)
// and invalid UTF-8. Without it such a value reaches a query and fails
// there, as a server error, for what is the client's input. A path that
// contains them names no resource (404); a query or a body breaks a rule
// (422), and a body that is not UTF-8 is malformed (400).
func rejectUnstorableText(errs errorWriter) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !storable(r.URL.Path) {
				errs.write(w, r, apperr.E(apperr.NotFound, "not found"))
				return
			}
			for name, values := range r.URL.Query() {
				for _, v := range append(values, name) {
					if !storable(v) {
						errs.write(w, r, apperr.Field(name, "must not contain NUL characters or invalid UTF-8"))
						return
					}
				}
			}
			if r.Body != nil && r.ContentLength != 0 {
				body, err := io.ReadAll(r.Body)
				if err != nil {
					errs.write(w, r, err) // over the size limit: 413
					return
				}
				switch {
				case !utf8.Valid(body):
					errs.write(w, r, apperr.E(apperr.BadRequest, "request body is not valid UTF-8"))
					return
				case hasJSONNul(body):
					errs.write(w, r, apperr.E(apperr.Invalid, "text must not contain NUL characters (\\u0000)"))
					return
				}
				r.Body = io.NopCloser(bytes.NewReader(body))
			}
			next.ServeHTTP(w, r)
		})
	}
}

func storable(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }

// hasJSONNul reports a raw NUL byte or a \u0000 escape in a JSON text. An
// escape is a backslash preceded by an even number of backslashes: `\\u0000`
// is the six characters \u0000, which PostgreSQL stores fine.
func hasJSONNul(b []byte) bool {
	if bytes.IndexByte(b, 0) >= 0 {
		return true
	}
	for i := 0; ; {
		j := bytes.Index(b[i:], []byte(`u0000`))
		if j < 0 {
			return false
		}
		at := i + j
		n := 0
		for k := at - 1; k >= 0 && b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 1 {
			return true
		}
		i = at + 1
	}
}
