package ofrep

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/sse"
)

// writeTimeout bounds each write to an event-stream client.
const writeTimeout = 10 * time.Second

// tokens seal the key an event stream belongs to into its URL, so the URL never
// carries the key itself (docs/reference/ofrep.md, Change notifications). A
// token is the key's id and environment with an HMAC under a key derived from
// SESSION_SECRET, so every instance verifies what any instance issued. It
// grants that stream alone; it stops working when the key is revoked, because
// every connection looks the key up, and revocation ends open streams through
// the route every ended credential takes.
type tokens struct {
	key []byte
}

const tokenLen = 8 + 16 + 16 // key id, environment id, truncated MAC

func newTokens(secret string) (tokens, error) {
	if secret == "" {
		return tokens{}, errors.New("ofrep: the token secret is empty")
	}
	k, err := hkdf.Key(sha256.New, []byte(secret), nil, "switchyard ofrep event stream token v1", 32)
	if err != nil {
		return tokens{}, fmt.Errorf("ofrep: derive token key: %w", err)
	}
	return tokens{key: k}, nil
}

func (t tokens) issue(keyID int64, envID uuid.UUID) string {
	b := make([]byte, 0, tokenLen)
	b = binary.BigEndian.AppendUint64(b, uint64(keyID))
	b = append(b, envID[:]...)
	b = append(b, t.mac(b)...)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (t tokens) open(token string) (keyID int64, envID uuid.UUID, ok bool) {
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(b) != tokenLen || !hmac.Equal(b[24:], t.mac(b[:24])) {
		return 0, uuid.Nil, false
	}
	copy(envID[:], b[8:24])
	return int64(binary.BigEndian.Uint64(b[:8])), envID, true
}

func (t tokens) mac(b []byte) []byte {
	m := hmac.New(sha256.New, t.key)
	m.Write(b)
	return m.Sum(nil)[:16]
}

// streamURL is the absolute URL of the event stream of p's key, as the web
// provider opens it with EventSource (it must not depend on the page's
// origin). Behind a proxy, X-Forwarded-Proto and X-Forwarded-Host name the
// address clients use.
func (h *Handler) streamURL(r *http.Request, p *auth.Principal) string {
	scheme := "http"
	if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	host := r.Host
	if fh := r.Header.Get("X-Forwarded-Host"); fh != "" {
		host = fh
	}
	u := url.URL{Scheme: scheme, Host: host, Path: "/ofrep/v1/events", RawQuery: "token=" + h.tokens.issue(p.KeyID, p.EnvironmentID)}
	return u.String()
}

var errBadToken = apperr.E(apperr.Unauthenticated, "invalid or revoked event stream token")

// events serves GET /ofrep/v1/events?token=…: after each change of the
// environment's flags an unnamed event {"type": "refetchEvaluation",
// "etag": …} (bursts coalesce into one), a keep-alive comment every 15 s,
// and nothing else: no flag data.
func (h *Handler) events(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	keyID, envID, ok := h.tokens.open(r.URL.Query().Get("token"))
	if !ok {
		h.cfg.Errors(w, r, errBadToken)
		return
	}
	p, err := h.cfg.Keys.SDKKeyPrincipal(ctx, keyID, envID)
	if err != nil {
		h.cfg.Errors(w, r, err)
		return
	}
	watch, err := h.cfg.Flags.Watch(ctx, envID, p.CredentialRefs())
	if err != nil {
		h.cfg.Errors(w, r, err)
		return
	}
	defer watch.Close()

	out := sse.Start(w, writeTimeout)
	if !out.Write([]byte(": connected\n\n")) {
		return
	}
	tick := time.NewTicker(h.cfg.KeepAlive)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-watch.Done():
			return
		case <-watch.Changed():
			watch.Drain() // a burst becomes one notice
			if !out.Write(h.notice(watch.Tag(), p.Client)) {
				return
			}
		case <-tick.C:
			if !out.Write([]byte(": keep-alive\n\n")) {
				return
			}
		}
	}
}

// notice is one encoded refetchEvaluation event, for the flags tagged tag.
type notice struct {
	tag   string
	frame []byte
}

// notice returns the event every stream of a key kind writes after a change
// to the flags tagged tag. It depends on nothing else, so it is encoded once
// per change and kind, not once per connection: a change reaches thousands
// of streams at once.
func (h *Handler) notice(tag string, client bool) []byte {
	slot := &h.notices[0]
	if client {
		slot = &h.notices[1]
	}
	if n := slot.Load(); n != nil && n.tag == tag {
		return n.frame
	}
	data, _ := json.Marshal(map[string]string{"type": "refetchEvaluation", "etag": bulkETag(tag, client, nil)})
	frame := append(append([]byte("data: "), data...), "\n\n"...)
	slot.Store(&notice{tag: tag, frame: frame}) // a race only encodes twice
	return frame
}
