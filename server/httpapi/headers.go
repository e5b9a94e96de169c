package httpapi

import "net/http"

// Browser hardening (docs/security.md, Browser hardening): the headers every
// response carries, and those of the dashboard's pages.

// contentSecurityPolicy is the policy of the dashboard's pages, the
// single-page app and the API reference at /api/docs alike:
//   - scripts only from the server's own files: no inline script, no
//     inline event handler, no eval, nothing from another origin (the build
//     emits none, and Swagger UI is bundled);
//   - styles only from the server's own stylesheets. The React components,
//     the dashboard's and Swagger UI's, set element styles through the DOM's
//     style property, which the policy does not govern; neither writes a
//     style attribute into markup or a <style> element (the end-to-end test
//     web/e2e/hardening.test.mjs would report the violation);
//   - images from the server and data: URLs (the favicon, Swagger UI's
//     icons in its stylesheet); fonts only from the server (none is used);
//   - requests only to the server itself (the API, /stream);
//   - no plugins, no <base> to another origin, forms only to the server;
//   - framed by no page (clickjacking), as X-Frame-Options: DENY says to
//     browsers that predate frame-ancestors.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; " +
	"img-src 'self' data:; connect-src 'self'; object-src 'none'; " +
	"base-uri 'self'; form-action 'self'; frame-ancestors 'none'"

// hstsValue asks browsers to reach this host, and its subdomains, over
// HTTPS only for two years. Sent only when COOKIE_SECURE is true: that
// setting already says the server is reached over HTTPS.
const hstsValue = "max-age=63072000; includeSubDomains"

// The header values as they go into a response's header map. Shared by
// every response, so setting one allocates nothing; cap == len, so an Add
// appends to a copy and never to them.
var (
	nosniffHeader  = []string{"nosniff"}[:1:1]
	hstsHeader     = []string{hstsValue}[:1:1]
	cspHeader      = []string{contentSecurityPolicy}[:1:1]
	frameHeader    = []string{"DENY"}[:1:1]
	referrerHeader = []string{"same-origin"}[:1:1]
)

// secureHeaders sets the headers of every response, whatever route answers
// it: X-Content-Type-Options: nosniff (a browser never reads a JSON body or
// an uploaded-looking file as HTML or script), and with hsts
// Strict-Transport-Security. It runs for the OFREP polls too, so it only
// stores shared values in the header map (the keys are canonical already).
func secureHeaders(hsts bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if hsts {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				h := w.Header()
				h["X-Content-Type-Options"] = nosniffHeader
				h["Strict-Transport-Security"] = hstsHeader
				next.ServeHTTP(w, r)
			})
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header()["X-Content-Type-Options"] = nosniffHeader
			next.ServeHTTP(w, r)
		})
	}
}

// setPageHeaders sets the headers of the dashboard's pages (and files):
// the Content-Security-Policy, X-Frame-Options and Referrer-Policy:
// same-origin, which keeps the dashboard's URLs (project and flag IDs) from
// the sites its links lead to.
func setPageHeaders(h http.Header) {
	h["Content-Security-Policy"] = cspHeader
	h["X-Frame-Options"] = frameHeader
	h["Referrer-Policy"] = referrerHeader
}
