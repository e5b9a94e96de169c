package httpapi

import (
	"net/http"
	"strings"

	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/identity"
)

// authenticator resolves the principal of every API request whose operation
// the document does not mark public (`security: []`), and applies the CSRF
// header rule to cookie-authenticated state-changing requests.
type authenticator struct {
	identity *identity.Service
	errs     errorWriter
}

func (a authenticator) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := routeFrom(r)
		if m == nil || isPublic(m) {
			next.ServeHTTP(w, r)
			return
		}
		p, err := a.identity.Authenticate(r.Context(), credentialsOf(r))
		if err != nil {
			a.errs.write(w, r, err)
			return
		}
		// Browser mutations must prove they come from our own pages; bearer
		// clients are exempt (docs/reference/identity.md, CSRF header).
		if p.ViaCookie() && !safeMethod(r.Method) && r.Header.Get("X-Service-Request") != "true" {
			a.errs.write(w, r, apperr.E(apperr.Forbidden, "missing header X-Service-Request: true"))
			return
		}
		next.ServeHTTP(w, r.WithContext(auth.NewContext(r.Context(), p)))
	})
}

// isPublic reports whether the operation overrides the document's security
// with an empty list: /api/auth/workspace, login and setup.
func isPublic(m *matchedRoute) bool {
	sec := m.route.Operation.Security
	return sec != nil && len(*sec) == 0
}

func safeMethod(method string) bool {
	return method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions
}

// credentialsOf reads the bearer value and the session cookie of r.
func credentialsOf(r *http.Request) auth.Credentials {
	var c auth.Credentials
	if h := r.Header.Get("Authorization"); len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		c.Bearer = strings.TrimSpace(h[7:])
	} else if h != "" {
		c.Bearer = "invalid" // a credential we cannot read must not fall back to the cookie
	}
	if ck, err := r.Cookie(auth.SessionCookieName); err == nil {
		c.Cookie = ck.Value
	}
	return c
}
