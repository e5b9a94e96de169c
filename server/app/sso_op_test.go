package app_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// testOP is a real OpenID Provider (zitadel/oidc's certified op package) on
// loopback, with the example in-memory storage and, over it, users whose
// claims and groups a test sets, a signing key it can rotate, and switches
// for where claims go.
type testOP struct {
	*storage.Storage
	URL      string
	provider *op.Provider

	mu              sync.Mutex
	users           map[string]*opUser // by subject
	key             *rsa.PrivateKey
	kid             string
	claimsInIDToken bool   // else only sub in the ID token; the rest from UserInfo
	userinfoSubject string // when set, UserInfo answers with this sub
}

type opUser struct {
	Subject       string
	Email         string
	EmailVerified bool
	Name          string
	Groups        []string
}

const (
	opClientID     = "switchyard"
	opClientSecret = "client-secret-never-shown"
	opOtherClient  = "other-app"
	testPublicURL  = "http://switchyard.test"
)

func startOP(t *testing.T) *testOP {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o := &testOP{URL: "http://" + ln.Addr().String(), users: map[string]*opUser{}, claimsInIDToken: true}
	o.rotate(t)
	redirect := testPublicURL + "/api/auth/oidc/callback"
	clients := map[string]*storage.Client{
		opClientID:    storage.WebClient(opClientID, opClientSecret, redirect),
		opOtherClient: storage.WebClient(opOtherClient, "other-secret", redirect),
	}
	o.Storage = storage.NewStorageWithClients(opUsers{o}, clients)
	o.provider, err = op.NewProvider(&op.Config{CryptoKey: sha256.Sum256([]byte("test op")), CodeMethodS256: true, AuthMethodPost: true},
		o, op.StaticIssuer(o.URL), op.WithAllowInsecure())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(o.provider)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return o
}

// rotate replaces the signing key: the provider's key set names only the
// new one from now on.
func (o *testOP) rotate(t *testing.T) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.key, o.kid = key, rand.Text()
}

func (o *testOP) addUser(u opUser) {
	o.mu.Lock()
	defer o.mu.Unlock()
	c := u
	o.users[u.Subject] = &c
}

func (o *testOP) set(fn func(o *testOP)) {
	o.mu.Lock()
	defer o.mu.Unlock()
	fn(o)
}

// SigningKey, SignatureAlgorithms and KeySet serve the rotating key.
func (o *testOP) SigningKey(context.Context) (op.SigningKey, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return opKey{key: o.key, kid: o.kid}, nil
}

func (o *testOP) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}

func (o *testOP) KeySet(context.Context) ([]op.Key, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return []op.Key{opPublicKey{opKey{key: o.key, kid: o.kid}}}, nil
}

// SetUserinfoFromRequest fills the ID token.
func (o *testOP) SetUserinfoFromRequest(_ context.Context, ui *oidc.UserInfo, req op.IDTokenRequest, _ []string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	ui.Subject = req.GetSubject()
	if o.claimsInIDToken {
		o.fill(ui, req.GetSubject())
	}
	return nil
}

// SetUserinfoFromToken fills the UserInfo answer.
func (o *testOP) SetUserinfoFromToken(_ context.Context, ui *oidc.UserInfo, _, subject, _ string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.fill(ui, subject)
	ui.Subject = subject
	if o.userinfoSubject != "" {
		ui.Subject = o.userinfoSubject
	}
	return nil
}

func (o *testOP) fill(ui *oidc.UserInfo, subject string) {
	u := o.users[subject]
	if u == nil {
		return
	}
	ui.Email, ui.EmailVerified, ui.Name = u.Email, oidc.Bool(u.EmailVerified), u.Name
	if !u.EmailVerified {
		// oidc.Bool(false) is omitted when encoded; an unverified address
		// must say so.
		ui.AppendClaims("email_verified", false)
	}
	ui.AppendClaims("groups", u.Groups)
}

type opKey struct {
	key *rsa.PrivateKey
	kid string
}

func (k opKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k opKey) Algorithm() jose.SignatureAlgorithm          { return jose.RS256 }
func (k opKey) Use() string                                 { return "sig" }
func (k opKey) ID() string                                  { return k.kid }

// Key is the private key, for signing.
func (k opKey) Key() any { return k.key }

// opPublicKey is what the key set publishes.
type opPublicKey struct{ opKey }

func (k opPublicKey) Key() any { return &k.key.PublicKey }

// opUsers adapts the test users to the example storage's user store, so its
// login step (CheckUsernamePassword) finds them by subject.
type opUsers struct{ o *testOP }

func (u opUsers) GetUserByID(id string) *storage.User { return u.GetUserByUsername(id) }
func (u opUsers) GetUserByUsername(name string) *storage.User {
	u.o.mu.Lock()
	defer u.o.mu.Unlock()
	x := u.o.users[name]
	if x == nil {
		return nil
	}
	return &storage.User{ID: x.Subject, Username: x.Subject, Password: "pw", Email: x.Email, EmailVerified: x.EmailVerified}
}
func (u opUsers) ExampleClientID() string { return opClientID }

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
	if err := o.CheckUsernamePassword(subject, "pw", id); err != nil {
		t.Fatalf("provider login as %s: %v", subject, err)
	}
	back := noFollow(t, o.URL+"/authorize/callback?id="+url.QueryEscape(id))
	return back
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
