package identity

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/access"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/audit"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/store"
)

// Login lockout (docs/reference/identity.md, Login lockout): 5 failures
// within 10 minutes lock the address for 15 minutes.
const (
	maxLoginFailures = 5
	failureWindow    = 10 * time.Minute
	lockDuration     = 15 * time.Minute
)

var (
	errBadCredentials     = apperr.E(apperr.Unauthenticated, "invalid credentials")
	errDeactivated        = apperr.E(apperr.Unauthenticated, "this account is deactivated")
	errSCIMTokenElsewhere = apperr.E(apperr.Unauthenticated, "a SCIM token is accepted only under /scim/v2/")
	errSSORequired        = apperr.E(apperr.Forbidden, "sign in with single sign-on").With("code", "SSO_REQUIRED")
)

// Authenticate resolves credentials to a principal, reading the database
// every time so that a revoked key, a deleted token or user, an ended session,
// a changed role or a deactivated user takes effect on the very next request
// on every instance.
func (s *Service) Authenticate(ctx context.Context, c auth.Credentials) (*auth.Principal, error) {
	q := db.New(s.pool)
	now := s.now()
	switch {
	case strings.HasPrefix(c.Bearer, auth.SDKKeyKind), strings.HasPrefix(c.Bearer, auth.ClientKeyKind):
		return s.authenticateSDKKey(ctx, q, c.Bearer)
	case strings.HasPrefix(c.Bearer, auth.TokenKind):
		return s.authenticateToken(ctx, q, c.Bearer, now)
	case strings.HasPrefix(c.Bearer, auth.SCIMTokenKind):
		// A provisioning token acts only under /scim/v2/, which does not
		// come through here (docs/scim.md, Tokens).
		return nil, errSCIMTokenElsewhere
	case c.Bearer != "":
		return nil, errBadCredentials
	case c.Cookie != "":
		return s.authenticateSession(ctx, q, c.Cookie, now)
	}
	return nil, apperr.E(apperr.Unauthenticated, "authentication required")
}

// authenticateSDKKey resolves an SDK key through the key cache (see
// keycache.go): SDK clients poll and reconnect often, and a database query
// per request would dominate the snapshot's cost.
func (s *Service) authenticateSDKKey(ctx context.Context, q *db.Queries, key string) (*auth.Principal, error) {
	if err := s.keys.current(ctx); err != nil {
		return nil, err
	}
	now := s.now()
	if s.legacySDKKey != "" && subtle.ConstantTimeCompare([]byte(key), []byte(s.legacySDKKey)) == 1 {
		if p, ok := s.keys.getLegacy(now); ok {
			return p, nil
		}
		env, err := q.GetLegacyKeyEnvironment(ctx)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, errBadCredentials
		}
		if err != nil {
			return nil, fmt.Errorf("legacy sdk key environment: %w", err)
		}
		p := auth.Principal{Kind: auth.KindSDKKey, KeyPrefix: prefixOf(key), ProjectID: env.ProjectID, EnvironmentID: env.ID}
		s.keys.putLegacy(p, now, s.now())
		return &p, nil
	}
	hash := auth.HashCredential(key)
	if p, ok := s.keys.get(hash, now); ok {
		return p, nil
	}
	k, err := q.GetSDKKeyByHash(ctx, hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errBadCredentials
	}
	if err != nil {
		return nil, fmt.Errorf("look up sdk key: %w", err)
	}
	if !strings.HasPrefix(key, keyPrefixes[k.Kind]) {
		return nil, errBadCredentials // a key's prefix is part of what it is
	}
	p := auth.Principal{
		Kind: auth.KindSDKKey, Client: k.Kind == KeyKindClient, KeyID: k.ID, KeyPrefix: k.Prefix,
		ProjectID: k.ProjectID, EnvironmentID: k.EnvironmentID,
	}
	s.keys.put(hash, p, now, s.now())
	return &p, nil
}

func (s *Service) authenticateToken(ctx context.Context, q *db.Queries, token string, now time.Time) (*auth.Principal, error) {
	row, err := q.GetTokenUser(ctx, auth.HashCredential(token))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errBadCredentials
	}
	if err != nil {
		return nil, fmt.Errorf("look up token: %w", err)
	}
	if row.ExpiresAt != nil && !now.Before(*row.ExpiresAt) {
		return nil, apperr.E(apperr.Unauthenticated, "token expired")
	}
	if row.LastUsedAt == nil || now.Sub(*row.LastUsedAt) >= time.Minute {
		staleBefore := now.Add(-time.Minute)
		if err := q.TouchToken(ctx, db.TouchTokenParams{ID: row.TokenID, Now: &now, StaleBefore: &staleBefore}); err != nil {
			return nil, fmt.Errorf("record token use: %w", err)
		}
	}
	return &auth.Principal{
		Kind: auth.KindUser, UserID: row.ID, Email: row.Email, Name: row.Name, Role: row.Role,
		TokenID: row.TokenID, TokenPrefix: row.TokenPrefix, ReadOnly: row.Scope == "read_only",
	}, nil
}

func (s *Service) authenticateSession(ctx context.Context, q *db.Queries, cookie string, now time.Time) (*auth.Principal, error) {
	id, err := s.sealer.Open(cookie, now)
	if err != nil {
		return nil, apperr.Wrap(apperr.Unauthenticated, "no valid session", err)
	}
	u, err := q.GetSessionUser(ctx, db.GetSessionUserParams{ID: id, Now: now})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, apperr.E(apperr.Unauthenticated, "no valid session")
	}
	if err != nil {
		return nil, fmt.Errorf("look up session: %w", err)
	}
	return &auth.Principal{Kind: auth.KindUser, UserID: u.ID, Email: u.Email, Name: u.Name, Role: u.Role, SessionID: id}, nil
}

func prefixOf(key string) string {
	if len(key) > 12 {
		return key[:12]
	}
	return key
}

// CurrentUser is the login response and GET /api/auth/me.
type CurrentUser struct {
	ID              int64
	Email           string
	Name            string
	Role            string
	WorkspaceName   string
	IsSetupComplete bool
}

// Session is a new login: the user and the sealed cookie value.
type Session struct {
	User    CurrentUser
	Cookie  string
	Expires time.Time
}

// loginOutcome is decided inside the transaction and turned into an error
// only after commit, so a failed attempt's count is kept, and so are its
// audit entries.
type loginOutcome struct {
	session     *Session
	remaining   int
	retryAfter  int
	deactivated bool
	ssoRequired bool
	userID      int64      // the address's user, when one exists
	lockedUntil *time.Time // set when this failure began a lockout
}

// record records the attempt in the audit trail (docs/audit.md, What is recorded):
// auth.login by the user, or auth.login_failed by an anonymous actor with
// the address tried, and auth.locked when the failure began a lockout. The
// resource is the user when the address has one, else the address.
func (o loginOutcome) record(ctx context.Context, s *Service, q *db.Queries, addr string) error {
	if o.session != nil {
		u := o.session.User
		return s.rec.recordAuth(ctx, q, "auth.login", userActor(u.ID, u.Email), u.ID, addr, map[string]any{"method": "password"})
	}
	failure := map[string]any{"method": "password", "error": "invalid_credentials", "attempts_remaining": o.remaining}
	switch {
	case o.retryAfter > 0:
		failure = map[string]any{"method": "password", "error": "locked", "retry_after_seconds": o.retryAfter}
	case o.deactivated:
		failure["error"] = "deactivated"
	case o.ssoRequired:
		failure = map[string]any{"method": "password", "error": "sso_required"}
	}
	anonymous := audit.Actor{Kind: audit.ActorAnonymous, Email: audit.Str(addr)}
	if err := s.rec.recordAuth(ctx, q, "auth.login_failed", anonymous, o.userID, addr, failure); err != nil || o.lockedUntil == nil {
		return err
	}
	locked := map[string]any{"method": "password", "failures": maxLoginFailures, "locked_until": o.lockedUntil.UTC()}
	return s.rec.recordAuth(ctx, q, "auth.locked", anonymous, o.userID, addr, locked)
}

// Login checks an email and password under the lockout rules and, on
// success, starts a session. Failures are counted per lowercased address
// whether or not an account exists, and an unknown address costs the same
// password-hash time as a wrong password, so responses never reveal which
// addresses exist (docs/reference/identity.md, Login lockout). A deactivated
// user is refused only after the lockout check and the right password, so the
// refusal tells nothing to whoever does not know the password; it neither
// counts as a failure nor clears the failures counted so far
// (docs/reference/identity.md, Deactivation).
func (s *Service) Login(ctx context.Context, email, password string) (Session, error) {
	addr := strings.ToLower(strings.TrimSpace(email))
	now := s.now()
	out, err := txV(ctx, s, func(q *db.Queries) (loginOutcome, error) {
		out, err := s.login(ctx, q, addr, password, now)
		if err != nil {
			return out, err
		}
		return out, out.record(ctx, s, q, addr)
	})
	if err != nil {
		return Session{}, fmt.Errorf("login: %w", err)
	}
	switch {
	case out.retryAfter > 0:
		return Session{}, apperr.E(apperr.TooManyRequests, "too many failed logins; try again later").With("retry_after_seconds", out.retryAfter)
	case out.deactivated:
		return Session{}, errDeactivated.With("attempts_remaining", out.remaining)
	case out.ssoRequired:
		return Session{}, errSSORequired
	case out.session == nil:
		return Session{}, errBadCredentials.With("attempts_remaining", out.remaining)
	}
	if err := s.fillWorkspace(ctx, &out.session.User); err != nil {
		return Session{}, err
	}
	return *out.session, nil
}

// login decides a sign-in attempt of addr in q's transaction (see Login).
func (s *Service) login(ctx context.Context, q *db.Queries, addr, password string, now time.Time) (loginOutcome, error) {
	if err := q.EnsureLoginAttempt(ctx, db.EnsureLoginAttemptParams{Email: addr, Now: now}); err != nil {
		return loginOutcome{}, err
	}
	att, err := q.LockLoginAttempt(ctx, addr)
	if err != nil {
		return loginOutcome{}, err
	}
	// Looked up first, so that every audit entry of the attempt names the
	// user; nothing of it reaches the answer before the password is checked.
	user, err := q.GetUserForLogin(ctx, addr)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return loginOutcome{}, err
	}
	known := loginOutcome{userID: user.ID}
	if att.LockedUntil != nil {
		if now.Before(*att.LockedUntil) {
			known.retryAfter = int(math.Ceil(att.LockedUntil.Sub(now).Seconds()))
			return known, nil
		}
		att.Failures, att.LockedUntil = 0, nil // the lock has run out
	}
	if att.Failures == 0 || now.Sub(att.WindowStartedAt) >= failureWindow {
		att.Failures, att.WindowStartedAt = 0, now
	}
	switch {
	case user.ID == 0:
		auth.DummyCheck(password)
	case user.PasswordHash == "":
		// A user provisioned by single sign-on has no password; the
		// dummy check keeps the answer's timing that of a wrong one.
		auth.DummyCheck(password)
	case !auth.CheckPassword(user.PasswordHash, password):
		// a wrong password: counted below
	case !user.Active:
		known.deactivated, known.remaining = true, max(0, maxLoginFailures-int(att.Failures))
		return known, nil
	default:
		// docs/sso.md, Password sign-in: with admins_only only workspace
		// admins may use their password. Like deactivation, the refusal
		// comes after the right password and is not a failure.
		if user.Role != auth.RoleAdmin {
			policy, err := q.GetSSOPasswordLogin(ctx)
			if err != nil {
				return loginOutcome{}, err
			}
			if policy == "admins_only" {
				known.ssoRequired = true
				return known, nil
			}
		}
		if err := q.DeleteLoginAttempt(ctx, addr); err != nil {
			return loginOutcome{}, err
		}
		sess, err := s.startSession(ctx, q, user.ID, now)
		if err != nil {
			return loginOutcome{}, err
		}
		sess.User = CurrentUser{ID: user.ID, Email: user.Email, Name: user.Name, Role: user.Role}
		known.session = &sess
		return known, nil
	}
	att.Failures++
	if att.Failures >= maxLoginFailures {
		until := now.Add(lockDuration)
		att.LockedUntil, known.lockedUntil = &until, &until
	}
	err = q.UpdateLoginAttempt(ctx, db.UpdateLoginAttemptParams{
		Email: addr, Failures: att.Failures, WindowStartedAt: att.WindowStartedAt, LockedUntil: att.LockedUntil,
	})
	known.remaining = max(0, maxLoginFailures-int(att.Failures))
	return known, err
}

// startSession stores a new session and seals its cookie.
func (s *Service) startSession(ctx context.Context, q *db.Queries, userID int64, now time.Time) (Session, error) {
	id, err := auth.NewSessionID()
	if err != nil {
		return Session{}, err
	}
	expires := now.Add(auth.SessionLifetime)
	if err := q.CreateSession(ctx, db.CreateSessionParams{ID: id, UserID: userID, ExpiresAt: expires}); err != nil {
		return Session{}, fmt.Errorf("create session: %w", err)
	}
	cookie, err := s.sealer.Seal(id, expires)
	if err != nil {
		return Session{}, err
	}
	return Session{Cookie: cookie, Expires: expires}, nil
}

func (s *Service) fillWorkspace(ctx context.Context, u *CurrentUser) error {
	info, err := s.WorkspaceInfo(ctx)
	if err != nil {
		return err
	}
	u.WorkspaceName, u.IsSetupComplete = info.Name, info.SetupComplete
	return nil
}

// Logout ends the session that authenticated p; for a token it does
// nothing. A copied cookie stops working because the session row is gone.
func (s *Service) Logout(ctx context.Context, p *auth.Principal) error {
	if err := access.RequireUser(p); err != nil {
		return err
	}
	if !p.ViaCookie() {
		return nil
	}
	err := s.tx(ctx, func(q *db.Queries) error { return q.DeleteSession(ctx, p.SessionID) })
	if err != nil {
		return fmt.Errorf("logout: %w", err)
	}
	return nil
}

// Me returns the current user of p.
func (s *Service) Me(ctx context.Context, p *auth.Principal) (CurrentUser, error) {
	if err := access.RequireUser(p); err != nil {
		return CurrentUser{}, err
	}
	u := CurrentUser{ID: p.UserID, Email: p.Email, Name: p.Name, Role: p.Role}
	return u, s.fillWorkspace(ctx, &u)
}

// SetupInput is the setup wizard's form.
type SetupInput struct {
	WorkspaceName string
	Name          string
	Email         string
	Password      string
}

// Setup creates the first workspace admin while no user exists, renames the
// workspace when a name is given, and logs the admin in. Once a user exists
// it answers 409 (docs/reference/identity.md, Setup wizard).
func (s *Service) Setup(ctx context.Context, in SetupInput) (Session, error) {
	name, email := strings.TrimSpace(in.Name), strings.TrimSpace(in.Email)
	if name == "" {
		return Session{}, apperr.Field("name", "must not be empty")
	}
	if err := validatePassword(in.Password); err != nil {
		return Session{}, err
	}
	hash, err := auth.HashPassword(in.Password)
	if err != nil {
		return Session{}, err
	}
	now := s.now()
	sess, err := txV(ctx, s, func(q *db.Queries) (Session, error) {
		if err := q.LockWorkspaceSetup(ctx); err != nil {
			return Session{}, err
		}
		if n, err := q.CountUsers(ctx); err != nil {
			return Session{}, err
		} else if n > 0 {
			return Session{}, apperr.E(apperr.Conflict, "setup is already complete")
		}
		ws, err := q.GetWorkspace(ctx) // the first boot made it
		if err != nil {
			return Session{}, fmt.Errorf("get workspace: %w", err)
		}
		renamed := strings.TrimSpace(in.WorkspaceName)
		if renamed != "" {
			if err := q.RenameWorkspace(ctx, renamed); err != nil {
				return Session{}, err
			}
		}
		u, err := q.CreateUser(ctx, db.CreateUserParams{Name: name, Email: email, PasswordHash: hash, Role: auth.RoleAdmin})
		if err != nil {
			return Session{}, store.AdaptError(err)
		}
		if err := s.rec.recordSetup(ctx, q, db.ListUsersRow(u), ws.Name, renamed); err != nil {
			return Session{}, err
		}
		sess, err := s.startSession(ctx, q, u.ID, now)
		sess.User = CurrentUser{ID: u.ID, Email: u.Email, Name: u.Name, Role: u.Role}
		return sess, err
	})
	if err != nil {
		return Session{}, fmt.Errorf("setup: %w", err)
	}
	return sess, s.fillWorkspace(ctx, &sess.User)
}

// recordSetup records what the setup wizard did, by the admin it created:
// the workspace renamed (when a name was given), the admin created, and
// auth.setup.
func (r recorder) recordSetup(ctx context.Context, q *db.Queries, admin db.ListUsersRow, workspace, renamed string) error {
	actor := userActor(admin.ID, admin.Email)
	ctx = audit.WithActor(ctx, actor)
	if renamed != "" {
		before := workspaceState{WorkspaceName: workspace}
		after := workspaceState{WorkspaceName: renamed, IsSetupComplete: true}
		if err := r.recordWorkspace(ctx, q, "workspace.updated", &before, &after); err != nil {
			return err
		}
	}
	if err := r.recordUser(ctx, q, "user.created", nil, &admin); err != nil {
		return err
	}
	return r.recordAuth(ctx, q, "auth.setup", actor, admin.ID, admin.Email, nil)
}

// SDKKeyPrincipal returns the principal of the SDK key id, bound to envID,
// for a credential that names a key without carrying it (an OFREP event
// stream's token). Id 0 is the legacy SDK_KEY. A key revoked since, or
// bound elsewhere, is 401. Like authenticateSDKKey it answers from the key
// cache when it can: browsers reconnect their event streams all at once
// after a deploy or a network blip, with keys their evaluations just used.
func (s *Service) SDKKeyPrincipal(ctx context.Context, id int64, envID uuid.UUID) (*auth.Principal, error) {
	if err := s.keys.current(ctx); err != nil {
		return nil, err
	}
	q := db.New(s.pool)
	now := s.now()
	if id == 0 {
		if s.legacySDKKey == "" {
			return nil, errBadCredentials
		}
		if p, ok := s.keys.getLegacy(now); ok {
			if p.EnvironmentID != envID {
				return nil, errBadCredentials
			}
			return p, nil
		}
		env, err := q.GetLegacyKeyEnvironment(ctx)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && env.ID != envID) {
			return nil, errBadCredentials
		}
		if err != nil {
			return nil, fmt.Errorf("legacy sdk key environment: %w", err)
		}
		p := auth.Principal{Kind: auth.KindSDKKey, KeyPrefix: prefixOf(s.legacySDKKey), ProjectID: env.ProjectID, EnvironmentID: env.ID}
		s.keys.putLegacy(p, now, s.now())
		return &p, nil
	}
	if p, ok := s.keys.getByID(id, now); ok {
		if p.EnvironmentID != envID {
			return nil, errBadCredentials
		}
		return p, nil
	}
	k, err := q.GetSDKKeyByID(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && k.EnvironmentID != envID) {
		return nil, errBadCredentials
	}
	if err != nil {
		return nil, fmt.Errorf("look up sdk key: %w", err)
	}
	p := auth.Principal{
		Kind: auth.KindSDKKey, Client: k.Kind == KeyKindClient, KeyID: k.ID, KeyPrefix: k.Prefix,
		ProjectID: k.ProjectID, EnvironmentID: k.EnvironmentID,
	}
	s.keys.put(k.KeyHash, p, now, s.now())
	return &p, nil
}
