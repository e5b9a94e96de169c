package auth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Session cookie facts (docs/reference/identity.md, Sessions).
const (
	SessionCookieName = "lg_session"
	SessionLifetime   = 7 * 24 * time.Hour
	SessionIDLen      = 32
)

// sealedLen is the plaintext of a cookie: the session id and its expiry.
const sealedLen = SessionIDLen + 8

// ErrBadCookie is returned for any cookie that does not unseal to a live
// session id: forged, truncated, tampered with, sealed under another secret
// or expired. Callers need not tell these apart.
var ErrBadCookie = errors.New("invalid or expired session cookie")

// Sealer seals session cookies with AES-256-GCM under a key derived from
// SESSION_SECRET. The cookie carries only the random session id and its
// expiry; the session itself lives in the database, so logout and account
// deletion end it everywhere (docs/reference/identity.md, Sessions).
type Sealer struct {
	aead cipher.AEAD
}

// NewSealer derives the cookie key from secret with HKDF-SHA256, so the
// secret's length and alphabet do not matter to the cipher.
func NewSealer(secret string) (*Sealer, error) {
	aead, err := newAEAD(secret, "switchyard session cookie v1")
	if err != nil {
		return nil, err
	}
	return &Sealer{aead: aead}, nil
}

// newAEAD is AES-256-GCM under a key derived from secret with HKDF-SHA256
// for one purpose (info): the Sealer's and every Box's. A changed info
// string would make every value sealed before unreadable.
func newAEAD(secret, info string) (cipher.AEAD, error) {
	if secret == "" {
		return nil, errors.New("session secret is empty")
	}
	key, err := hkdf.Key(sha256.New, []byte(secret), nil, info, 32)
	if err != nil {
		return nil, fmt.Errorf("derive key: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("cipher: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("cipher: %w", err)
	}
	return aead, nil
}

// NewSessionID returns a random session id.
func NewSessionID() ([]byte, error) {
	id := make([]byte, SessionIDLen)
	if _, err := rand.Read(id); err != nil {
		return nil, fmt.Errorf("new session id: %w", err)
	}
	return id, nil
}

// Seal returns the cookie value for a session id expiring at expires.
func (s *Sealer) Seal(id []byte, expires time.Time) (string, error) {
	if len(id) != SessionIDLen {
		return "", fmt.Errorf("seal session: id has %d bytes, want %d", len(id), SessionIDLen)
	}
	plain := make([]byte, sealedLen)
	copy(plain, id)
	binary.BigEndian.PutUint64(plain[SessionIDLen:], uint64(expires.Unix()))
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+sealedLen+s.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("seal session: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(s.aead.Seal(nonce, nonce, plain, nil)), nil
}

// Open returns the session id sealed in value, or ErrBadCookie when value is
// not a cookie this Sealer made or its expiry is not after now.
func (s *Sealer) Open(value string, now time.Time) ([]byte, error) {
	raw, err := base64.RawURLEncoding.DecodeString(value)
	if err != nil || len(raw) != s.aead.NonceSize()+sealedLen+s.aead.Overhead() {
		return nil, ErrBadCookie
	}
	nonce, box := raw[:s.aead.NonceSize()], raw[s.aead.NonceSize():]
	plain, err := s.aead.Open(nil, nonce, box, nil)
	if err != nil || len(plain) != sealedLen {
		return nil, ErrBadCookie
	}
	expires := int64(binary.BigEndian.Uint64(plain[SessionIDLen:]))
	if now.Unix() >= expires {
		return nil, ErrBadCookie
	}
	return plain[:SessionIDLen], nil
}

// SessionCookie returns the Set-Cookie header value for a session, with the
// attributes of docs/reference/identity.md, Sessions: Path=/, HttpOnly,
// SameSite=Strict, Max-Age 7 days, Secure unless COOKIE_SECURE=false. An empty
// value with maxAge < 0 clears the cookie.
func SessionCookie(value string, maxAge time.Duration, secure bool) string {
	c := &http.Cookie{
		Name:     SessionCookieName,
		Value:    value,
		Path:     "/",
		HttpOnly: true,
		Secure:   secure,
		SameSite: http.SameSiteStrictMode,
		MaxAge:   int(maxAge / time.Second),
	}
	if maxAge < 0 {
		c.MaxAge = -1
	}
	return c.String()
}
