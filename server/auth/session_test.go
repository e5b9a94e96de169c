package auth_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/switchyard/switchyard/server/auth"
)

var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func mustSealer(t testing.TB, secret string) *auth.Sealer {
	t.Helper()
	s, err := auth.NewSealer(secret)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSealOpenRoundTrip(t *testing.T) {
	s := mustSealer(t, "a-secret-of-at-least-thirty-two-characters")
	id, err := auth.NewSessionID()
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.Seal(id, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Open(v, t0)
	if err != nil || !bytes.Equal(got, id) {
		t.Fatalf("Open = %x, %v; want %x", got, err, id)
	}
}

func TestOpenRejects(t *testing.T) {
	s := mustSealer(t, "a-secret-of-at-least-thirty-two-characters")
	other := mustSealer(t, "another-secret-of-at-least-thirty-two-chars")
	id, _ := auth.NewSessionID()
	v, _ := s.Seal(id, t0.Add(time.Hour))
	flipped := []byte(v)
	flipped[len(flipped)/2] ^= 1
	cases := []struct {
		name   string
		sealer *auth.Sealer
		value  string
		now    time.Time
	}{
		{"expired", s, v, t0.Add(time.Hour)},
		{"long expired", s, v, t0.Add(8 * 24 * time.Hour)},
		{"other secret", other, v, t0},
		{"tampered", s, string(flipped), t0},
		{"truncated", s, v[:len(v)-3], t0},
		{"empty", s, "", t0},
		{"not base64", s, strings.Repeat("*", len(v)), t0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got, err := c.sealer.Open(c.value, c.now); err == nil {
				t.Fatalf("Open accepted it: %x", got)
			}
		})
	}
}

func TestSessionCookieAttributes(t *testing.T) {
	got := auth.SessionCookie("v", auth.SessionLifetime, true)
	for _, want := range []string{"lg_session=v", "Path=/", "Max-Age=604800", "HttpOnly", "Secure", "SameSite=Strict"} {
		if !strings.Contains(got, want) {
			t.Errorf("cookie %q lacks %q", got, want)
		}
	}
	if insecure := auth.SessionCookie("v", auth.SessionLifetime, false); strings.Contains(insecure, "Secure") {
		t.Errorf("COOKIE_SECURE=false cookie %q is Secure", insecure)
	}
	if cleared := auth.SessionCookie("", -1, true); !strings.Contains(cleared, "Max-Age=0") {
		t.Errorf("clearing cookie %q lacks Max-Age=0", cleared)
	}
}

// FuzzOpen feeds tampered, truncated and random cookies to the unsealing
// path: only a cookie sealed by this Sealer opens, and only before its
// expiry; nothing panics.
func FuzzOpen(f *testing.F) {
	s := mustSealer(f, "a-secret-of-at-least-thirty-two-characters")
	id := bytes.Repeat([]byte{7}, auth.SessionIDLen)
	valid, _ := s.Seal(id, t0.Add(time.Hour))
	f.Add(valid, int64(0))
	f.Add(valid, int64(3600))
	f.Add(valid[:10], int64(0))
	f.Add("", int64(0))
	f.Fuzz(func(t *testing.T, value string, offset int64) {
		now := t0.Add(time.Duration(offset%1e6) * time.Second)
		got, err := s.Open(value, now)
		if err != nil {
			return
		}
		// Only cookies sealed above (with id, expiring at t0+1h) can open:
		// anything else would be a forgery of AES-GCM. Each fuzz worker seals
		// its own copy, so compare what it carries, not its bytes.
		if !now.Before(t0.Add(time.Hour)) {
			t.Fatalf("opened an expired cookie at %v", now)
		}
		if !bytes.Equal(got, id) {
			t.Fatalf("opened to %x, want %x", got, id)
		}
	})
}
