package httpapi

import "testing"

// Metrics labels come from a fixed set: a client choosing URLs must not
// create label values.
func TestRouteNameIsBounded(t *testing.T) {
	for path, want := range map[string]string{
		"/health":                           "/health",
		"/api/docs":                         "/api/docs",
		"/api/whatever/123":                 "/api/(unmatched)",
		"/ofrep/v1/evaluate/flags":          "/ofrep/v1/evaluate/flags",
		"/ofrep/v1/evaluate/flags/any-flag": "/ofrep/v1/evaluate/flags/{key}",
		"/ofrep/v1/configuration":           "/ofrep/v1/configuration",
		"/ofrep/v1/events":                  "/ofrep/v1/events",
		"/ofrep/v1/made-up-123":             "/ofrep/(unmatched)",
		"/settings/keys":                    "/(dashboard)",
	} {
		if got := routeName(path, &routeLabel{}); got != want {
			t.Errorf("routeName(%q) = %q, want %q", path, got, want)
		}
	}
}
