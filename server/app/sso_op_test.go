package app_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/switchyard/switchyard/server/internal/testop"
)

// testOP is a real OpenID Provider on loopback (server/internal/testop).
type testOP struct{ *testop.Provider }

type opUser = testop.User

const (
	opClientID     = "switchyard"
	opClientSecret = "client-secret-never-shown"
	opOtherClient  = "other-app"
	testPublicURL  = "http://switchyard.test"
)

func startOP(t *testing.T) *testOP {
	t.Helper()
	return startOPWith(t, testop.Config{})
}

// startOPWith starts a provider with cfg and the two clients.
func startOPWith(t *testing.T, cfg testop.Config) *testOP {
	t.Helper()
	redirect := testPublicURL + "/api/auth/oidc/callback"
	cfg.Clients = append(cfg.Clients,
		testop.Client{ID: opClientID, Secret: opClientSecret, RedirectURIs: []string{redirect}},
		testop.Client{ID: opOtherClient, Secret: "other-secret", RedirectURIs: []string{redirect}})
	p, err := testop.Start("127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return &testOP{p}
}

func (o *testOP) addUser(u opUser) { o.AddUser(u) }

func (o *testOP) set(fn func(*testop.Switches)) { o.Set(fn) }

func (o *testOP) rotate(t *testing.T) {
	t.Helper()
	if err := o.Rotate(); err != nil {
		t.Fatal(err)
	}
}

// authorize plays the browser at the provider: it follows authURL to the
// login step, signs in as subject, and returns the URL the provider sends
// the browser back to (our redirect URI with code and state).
func (o *testOP) authorize(t *testing.T, authURL, subject string) *url.URL {
	t.Helper()
	loc := noFollow(t, authURL)
	id := loc.Query().Get("authRequestID")
	if id == "" {
		t.Fatalf("provider did not ask for a login: %s", loc)
	}
	// The provider's login page posts this form.
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.PostForm(o.Base+"/login/username", url.Values{"id": {id}, "username": {subject}, "password": {testop.Password}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("provider login as %s = %d", subject, resp.StatusCode)
	}
	return noFollow(t, resp.Request.URL.ResolveReference(location(t, resp)).String())
}

// noFollow GETs u and returns the redirect's target.
func noFollow(t *testing.T, u string, cookies ...*http.Cookie) *url.URL {
	t.Helper()
	resp := getNoFollow(t, u, cookies...)
	if resp.StatusCode != http.StatusFound && resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("GET %s = %d, want a redirect", u, resp.StatusCode)
	}
	return location(t, resp)
}

// location is a response's Location as sent, not resolved against the
// request: a relative redirect stays relative.
func location(t *testing.T, resp *http.Response) *url.URL {
	t.Helper()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func getNoFollow(t *testing.T, u string, cookies ...*http.Cookie) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cookies {
		req.AddCookie(c)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	resp.Body.Close()
	return resp
}
