package app_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchyard/switchyard/server/app"
	"github.com/switchyard/switchyard/server/internal/apptest"
)

// tokenEpoch is where the service clock starts in the token tests.
var tokenEpoch = time.Date(2027, 1, 4, 12, 0, 0, 0, time.UTC)

type tokenBody struct {
	ID         int64      `json:"id"`
	Name       string     `json:"name"`
	Token      string     `json:"token"`
	Prefix     string     `json:"prefix"`
	Scope      string     `json:"scope"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	ExpiresAt  *time.Time `json:"expires_at"`
}

func TestTokens(t *testing.T) {
	t.Parallel()
	clock := apptest.NewClock(tokenEpoch)
	s := apptest.Start(t, nil, app.WithClock(clock.Now))
	_, alice := s.User(t, "alice@example.com", "viewer")
	_, bob := s.User(t, "bob@example.com", "admin")

	var ci tokenBody
	must(t, s, alice, "POST", "/api/tokens", map[string]any{"name": "CI", "scope": "read_write", "expires_in_days": 30}, http.StatusOK, &ci)
	if !strings.HasPrefix(ci.Token, "pat_") || ci.Prefix != ci.Token[:12] || ci.Name != "CI" || ci.Scope != "read_write" ||
		ci.ExpiresAt == nil || !ci.ExpiresAt.Equal(tokenEpoch.Add(30*24*time.Hour)) {
		t.Errorf("created token = %+v, want a pat_ token expiring 30 days from the clock", ci)
	}
	var forever tokenBody
	must(t, s, alice, "POST", "/api/tokens", map[string]any{"name": "forever", "scope": "read_only"}, http.StatusOK, &forever)
	if forever.ExpiresAt != nil || forever.Scope != "read_only" {
		t.Errorf("token without expiry = %+v", forever)
	}

	// The new token acts as alice; its use is recorded; listings never carry the value.
	clock.Advance(time.Hour)
	must(t, s, ci.Token, "GET", "/api/tokens", nil, http.StatusOK, nil)
	status, raw := call(t, s, alice, "GET", "/api/tokens", nil)
	if status != http.StatusOK || strings.Contains(string(raw), ci.Token) || strings.Contains(string(raw), `"token"`) {
		t.Errorf("list = %d %s, want no token values", status, raw)
	}
	var list []tokenBody
	must(t, s, alice, "GET", "/api/tokens", nil, http.StatusOK, &list)
	if len(list) != 3 || list[0].ID != forever.ID || list[1].ID != ci.ID {
		t.Fatalf("alice's tokens = %+v, want forever, CI and the test token, newest first", list)
	}
	if list[1].LastUsedAt == nil || !list[1].LastUsedAt.Equal(tokenEpoch.Add(time.Hour)) || list[0].LastUsedAt != nil {
		t.Errorf("last_used_at: CI %v, forever %v", list[1].LastUsedAt, list[0].LastUsedAt)
	}
	// Tokens are flat: bob, a workspace admin, sees and deletes only his own.
	var bobs []tokenBody
	must(t, s, bob, "GET", "/api/tokens", nil, http.StatusOK, &bobs)
	if len(bobs) != 1 {
		t.Errorf("bob sees %d tokens, want his 1", len(bobs))
	}
	must(t, s, bob, "DELETE", "/api/tokens/"+itoa(ci.ID), nil, http.StatusNotFound, nil)
	must(t, s, alice, "DELETE", "/api/tokens/987654", nil, http.StatusNotFound, nil)

	// Expiry is enforced by the clock.
	clock.Advance(30 * 24 * time.Hour)
	must(t, s, ci.Token, "GET", "/api/tokens", nil, http.StatusUnauthorized, nil)
	// Deleting revokes at once.
	must(t, s, alice, "DELETE", "/api/tokens/"+itoa(forever.ID), nil, http.StatusNoContent, nil)
	must(t, s, forever.Token, "GET", "/api/tokens", nil, http.StatusUnauthorized, nil)
	must(t, s, alice, "DELETE", "/api/tokens/"+itoa(forever.ID), nil, http.StatusNotFound, nil)

	for name, body := range map[string]map[string]any{
		"no expiry days":   {"name": "x", "scope": "read_only", "expires_in_days": 0},
		"too many days":    {"name": "x", "scope": "read_only", "expires_in_days": 366},
		"unknown scope":    {"name": "x", "scope": "admin"},
		"missing scope":    {"name": "x"},
		"empty name":       {"name": "", "scope": "read_only"},
		"blank name":       {"name": "  ", "scope": "read_only"},
		"fractional days":  {"name": "x", "scope": "read_only", "expires_in_days": 1.5},
		"days as a string": {"name": "x", "scope": "read_only", "expires_in_days": "7"},
	} {
		if status, raw := call(t, s, alice, "POST", "/api/tokens", body); status != http.StatusUnprocessableEntity {
			t.Errorf("create with %s = %d %s, want 422", name, status, raw)
		}
	}
	var edge tokenBody
	must(t, s, bob, "POST", "/api/tokens", map[string]any{"name": "edge", "scope": "read_only", "expires_in_days": 365}, http.StatusOK, &edge)
	if edge.ExpiresAt == nil || !edge.ExpiresAt.Equal(clock.Now().Add(365*24*time.Hour)) {
		t.Errorf("365-day token expires at %v", edge.ExpiresAt)
	}
}

// docs/reference/identity.md, Personal access tokens: a read_only token reads,
// may mint read_only tokens, but never a read_write one, and never deletes.
func TestReadOnlyTokenScope(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	id, rw := s.User(t, "alice@example.com", "admin")
	ro := s.Token(t, id, "read_only", nil)

	must(t, s, ro, "GET", "/api/tokens", nil, http.StatusOK, nil)
	var minted tokenBody
	must(t, s, ro, "POST", "/api/tokens", map[string]any{"name": "child", "scope": "read_only"}, http.StatusOK, &minted)
	must(t, s, ro, "POST", "/api/tokens", map[string]any{"name": "escalate", "scope": "read_write"}, http.StatusForbidden, nil)
	must(t, s, minted.Token, "POST", "/api/tokens", map[string]any{"name": "escalate", "scope": "read_write"}, http.StatusForbidden, nil)
	must(t, s, ro, "DELETE", "/api/tokens/"+itoa(minted.ID), nil, http.StatusForbidden, nil)
	must(t, s, rw, "DELETE", "/api/tokens/"+itoa(minted.ID), nil, http.StatusNoContent, nil)
}

// An expired token is refused like an unknown one.
func TestExpiredToken(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	id, _ := s.User(t, "alice@example.com", "admin")
	past := time.Now().Add(-time.Minute)
	expired := s.Token(t, id, "read_write", &past)
	for _, r := range []struct{ method, path string }{
		{"GET", "/api/tokens"},
		{"GET", "/api/projects"},
		{"GET", "/api/users"},
	} {
		if status, raw := call(t, s, expired, r.method, r.path, nil); status != http.StatusUnauthorized {
			t.Errorf("%s %s with an expired token = %d %s, want 401", r.method, r.path, status, raw)
		}
	}
}
