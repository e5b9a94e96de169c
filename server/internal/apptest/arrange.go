package apptest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/server/auth"
)

// DB returns a pool on the instance's database, for arranging test data
// directly. It closes with the instance, not with the (sub)test that first
// asked for it.
func (s *Server) DB(t testing.TB) *pgxpool.Pool {
	t.Helper()
	s.dbOnce.Do(func() {
		s.db, s.dbErr = pgxpool.New(context.Background(), s.DBURL)
	})
	if s.dbErr != nil {
		t.Fatalf("open test pool: %v", s.dbErr)
	}
	return s.db
}

// User creates a workspace user with role (admin, editor or viewer) and the
// password "password123", and returns its id and a read_write personal
// access token acting as it.
func (s *Server) User(t testing.TB, email, role string) (id int64, token string) {
	t.Helper()
	hash, err := auth.HashPassword("password123")
	if err != nil {
		t.Fatal(err)
	}
	err = s.DB(t).QueryRow(context.Background(),
		`INSERT INTO users (name, email, password_hash, role) VALUES ($1, $2, $3, $4) RETURNING id`,
		email, email, hash, role).Scan(&id)
	if err != nil {
		t.Fatalf("create user %s: %v", email, err)
	}
	return id, s.Token(t, id, "read_write", nil)
}

// Token creates a personal access token for a user and returns its value.
func (s *Server) Token(t testing.TB, userID int64, scope string, expiresAt *time.Time) string {
	t.Helper()
	full, prefix, hash, err := auth.NewCredential(auth.TokenKind)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.DB(t).Exec(context.Background(),
		`INSERT INTO personal_access_tokens (user_id, name, token_hash, prefix, scope, expires_at) VALUES ($1, 'test', $2, $3, $4, $5)`,
		userID, hash, prefix, scope, expiresAt)
	if err != nil {
		t.Fatalf("create token: %v", err)
	}
	return full
}

// Member makes a user a member of a project with role.
func (s *Server) Member(t testing.TB, projectID uuid.UUID, userID int64, role string) {
	t.Helper()
	_, err := s.DB(t).Exec(context.Background(),
		`INSERT INTO project_members (project_id, user_id, role) VALUES ($1, $2, $3)`, projectID, userID, role)
	if err != nil {
		t.Fatalf("add member: %v", err)
	}
}

// SDKKey creates an SDK key for an environment and returns its value.
func (s *Server) SDKKey(t testing.TB, envID uuid.UUID) string {
	t.Helper()
	full, prefix, hash, err := auth.NewCredential(auth.SDKKeyKind)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.DB(t).Exec(context.Background(),
		`INSERT INTO sdk_keys (project_id, environment_id, name, key_hash, prefix)
		 SELECT project_id, id, 'test', $2, $3 FROM environments WHERE id = $1`, envID, hash, prefix)
	if err != nil {
		t.Fatalf("create sdk key: %v", err)
	}
	return full
}

// DefaultProject returns the seeded Default project's id and its
// environments' ids by slug (production, staging, development).
func (s *Server) DefaultProject(t testing.TB) (uuid.UUID, map[string]uuid.UUID) {
	t.Helper()
	rows, err := s.DB(t).Query(context.Background(),
		`SELECT p.id, e.slug, e.id FROM projects p JOIN environments e ON e.project_id = p.id WHERE p.slug = 'default'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var project uuid.UUID
	envs := map[string]uuid.UUID{}
	for rows.Next() {
		var slug string
		var id uuid.UUID
		if err := rows.Scan(&project, &slug, &id); err != nil {
			t.Fatal(err)
		}
		envs[slug] = id
	}
	if err := rows.Err(); err != nil || len(envs) == 0 {
		t.Fatalf("default project not found: %v", err)
	}
	return project, envs
}

// Request is one HTTP call made by Do.
type Request struct {
	Method string
	Path   string
	Bearer string            // Authorization: Bearer value, when set
	Cookie *http.Cookie      // a session cookie, when set
	Header map[string]string // extra headers
	Body   any               // encoded as JSON unless it is a string or []byte
}

// Do sends r to the instance and returns the status, the raw body and the
// response (whose body is already read). Every response is checked against
// api/openapi.yaml: an undocumented status or a body that breaks its schema
// fails the test.
func (s *Server) Do(t testing.TB, r Request) (int, []byte, *http.Response) {
	t.Helper()
	var body io.Reader
	switch b := r.Body.(type) {
	case nil:
	case string:
		body = bytes.NewBufferString(b)
	case []byte:
		body = bytes.NewBuffer(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		body = bytes.NewBuffer(raw)
	}
	req, err := http.NewRequest(r.Method, s.URL+r.Path, body)
	if err != nil {
		t.Fatal(err)
	}
	if r.Body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.Bearer != "" {
		req.Header.Set("Authorization", "Bearer "+r.Bearer)
	}
	if r.Cookie != nil {
		req.AddCookie(r.Cookie)
	}
	for k, v := range r.Header {
		req.Header.Set(k, v)
	}
	// Redirects are not followed: a 302 is the answer the contract checks,
	// and what it points at was not the request.
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", r.Method, r.Path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	checkResponse(t, req, resp, raw)
	return resp.StatusCode, raw, resp
}

var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// Clock is a settable clock for app.WithClock: tests move time instead of
// sleeping.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock reading start.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
