// Package testop runs a real OpenID Provider on loopback for tests: the
// certified op package of zitadel/oidc with its example in-memory storage and
// its example login page, and over them users whose claims and groups a test
// sets, a signing key it can rotate, and switches for where claims go. The Go tests start it in-process; the dashboard's
// browser tests run it as a process (cmd/testop).
package testop

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"net"
	"net/http"
	"sync"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// Password is every user's password on the provider's login page.
const Password = "pw"

// Client is a relying party registered with the provider.
type Client struct {
	ID, Secret   string
	RedirectURIs []string
}

// User is an account at the provider. Its username on the login page is its
// Subject.
type User struct {
	Subject       string
	Email         string
	EmailVerified bool
	Name          string
	Groups        []string
}

// Switches change what the provider puts in its answers. The zero value is
// a well-behaved provider.
type Switches struct {
	// ClaimsOnlyInUserinfo leaves every claim but sub out of the ID token.
	ClaimsOnlyInUserinfo bool
	// UserinfoSubject, when set, is the sub UserInfo answers with.
	UserinfoSubject string
}

// Provider is a running OpenID Provider.
type Provider struct {
	*storage.Storage
	// URL is the issuer, exactly as the provider names itself in its
	// discovery document and its ID tokens: Base, with a trailing slash
	// when Config.TrailingSlash is set.
	URL string
	// Base is the provider's address, http://host:port, without a
	// trailing slash: the base of its endpoints and its login page.
	Base string

	srv *http.Server

	mu       sync.Mutex
	users    map[string]*User // by subject
	key      *rsa.PrivateKey
	kid      string
	switches Switches
}

// Config holds a provider's settings; the zero value is a provider with no
// clients whose issuer has no trailing slash.
type Config struct {
	Clients []Client
	// TrailingSlash makes the issuer the base URL followed by a slash
	// (http://127.0.0.1:port/), as many providers name theirs (every Auth0
	// tenant does, and so does zitadel's example provider): the discovery
	// document and the ID tokens' iss say it so, and its endpoints stay
	// under the base URL.
	TrailingSlash bool
}

// Listen starts a provider on addr ("127.0.0.1:0" for any free port) that
// knows the given clients.
func Listen(addr string, clients ...Client) (*Provider, error) {
	return Start(addr, Config{Clients: clients})
}

// Start starts a provider on addr with cfg.
func Start(addr string, cfg Config) (*Provider, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	base := "http://" + ln.Addr().String()
	p := &Provider{URL: base, Base: base, users: map[string]*User{}}
	if cfg.TrailingSlash {
		p.URL += "/"
	}
	if err := p.Rotate(); err != nil {
		ln.Close()
		return nil, err
	}
	registered := map[string]*storage.Client{}
	for _, c := range cfg.Clients {
		registered[c.ID] = storage.WebClient(c.ID, c.Secret, c.RedirectURIs...)
	}
	p.Storage = storage.NewStorageWithClients(users{p}, registered)
	// The example server adds the login page (/login/username) to the
	// provider; a nil logger leaves the process's default logger alone.
	p.srv = &http.Server{Handler: exampleop.SetupServer(p.URL, p, nil, false)}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// Close stops the provider.
func (p *Provider) Close() error { return p.srv.Close() }

// Rotate replaces the signing key: the provider's key set names only the
// new one from now on.
func (p *Provider) Rotate() error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("generate signing key: %w", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.key, p.kid = key, rand.Text()
	return nil
}

// AddUser adds a user, or replaces the one with the same subject.
func (p *Provider) AddUser(u User) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := u
	c.Groups = append([]string(nil), u.Groups...)
	p.users[u.Subject] = &c
}

// Set changes the switches.
func (p *Provider) Set(fn func(*Switches)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fn(&p.switches)
}

// SigningKey, SignatureAlgorithms and KeySet serve the rotating key.
func (p *Provider) SigningKey(context.Context) (op.SigningKey, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return signingKey{key: p.key, kid: p.kid}, nil
}

// SignatureAlgorithms is RS256 only.
func (p *Provider) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}

// KeySet publishes the current key.
func (p *Provider) KeySet(context.Context) ([]op.Key, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return []op.Key{publicKey{signingKey{key: p.key, kid: p.kid}}}, nil
}

// SetUserinfoFromRequest fills the ID token.
func (p *Provider) SetUserinfoFromRequest(_ context.Context, ui *oidc.UserInfo, req op.IDTokenRequest, _ []string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	ui.Subject = req.GetSubject()
	if !p.switches.ClaimsOnlyInUserinfo {
		p.fill(ui, req.GetSubject())
	}
	return nil
}

// SetUserinfoFromToken fills the UserInfo answer.
func (p *Provider) SetUserinfoFromToken(_ context.Context, ui *oidc.UserInfo, _, subject, _ string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fill(ui, subject)
	ui.Subject = subject
	if p.switches.UserinfoSubject != "" {
		ui.Subject = p.switches.UserinfoSubject
	}
	return nil
}

func (p *Provider) fill(ui *oidc.UserInfo, subject string) {
	u := p.users[subject]
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

type signingKey struct {
	key *rsa.PrivateKey
	kid string
}

func (k signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k signingKey) Algorithm() jose.SignatureAlgorithm          { return jose.RS256 }
func (k signingKey) Use() string                                 { return "sig" }
func (k signingKey) ID() string                                  { return k.kid }

// Key is the private key, for signing.
func (k signingKey) Key() any { return k.key }

// publicKey is what the key set publishes.
type publicKey struct{ signingKey }

func (k publicKey) Key() any { return &k.key.PublicKey }

// users adapts the provider's users to the example storage's user store, so
// its login step (CheckUsernamePassword) finds them by subject.
type users struct{ p *Provider }

func (u users) GetUserByID(id string) *storage.User { return u.GetUserByUsername(id) }
func (u users) GetUserByUsername(name string) *storage.User {
	u.p.mu.Lock()
	defer u.p.mu.Unlock()
	x := u.p.users[name]
	if x == nil {
		return nil
	}
	return &storage.User{ID: x.Subject, Username: x.Subject, Password: Password, Email: x.Email, EmailVerified: x.EmailVerified}
}

// ExampleClientID is asked for by the example storage; no test uses it.
func (u users) ExampleClientID() string { return "" }
