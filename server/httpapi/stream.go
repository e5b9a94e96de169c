package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/server/access"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/etag"
	"github.com/switchyard/switchyard/server/identity"
	"github.com/switchyard/switchyard/server/sse"
	"github.com/switchyard/switchyard/server/stream"
)

// writeTimeout bounds each write to a stream client: a client that cannot
// take one event within it is gone.
const writeTimeout = 10 * time.Second

// streamHandler serves GET /stream (docs/reference/stream.md, Events).
type streamHandler struct {
	identity  *identity.Service
	hub       *stream.Hub
	errs      errorWriter
	keepAlive time.Duration
}

func (h streamHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	creds := credentialsOf(r)
	if k := r.URL.Query().Get("sdk_key"); k != "" {
		// For clients that cannot set headers (browser EventSource).
		creds.Bearer = k
	}
	p, err := h.identity.Authenticate(ctx, creds)
	if err != nil {
		h.errs.write(w, r, err)
		return
	}
	var want *uuid.UUID
	if v := r.URL.Query().Get("environment_id"); v != "" {
		id, err := uuid.Parse(v)
		if err != nil {
			h.errs.write(w, r, apperr.Field("environment_id", "must be a UUID"))
			return
		}
		want = &id
	}
	envs, err := h.identity.StreamEnvironments(ctx, p, want)
	if err != nil {
		h.errs.write(w, r, err)
		return
	}
	// Subscribe first: the bootstrap and the live queue are cut at one
	// instant, so no write falls between them.
	sub, boot, n, err := h.hub.Subscribe(ctx, envs, p.CredentialRefs())
	if err != nil {
		if errors.Is(err, stream.ErrClosed) {
			err = apperr.Wrap(apperr.Unavailable, "the server is shutting down", err)
		}
		h.errs.write(w, r, err)
		return
	}
	defer h.hub.Unsubscribe(sub)

	w.Header().Set("Access-Control-Allow-Origin", "*")
	out := sse.Start(w, writeTimeout)

	// connected.environment_id is the SDK key's environment, null for
	// cookie and token streams (docs/reference/stream.md, Connections).
	var envID *string
	if p.Kind == auth.KindSDKKey {
		s := p.EnvironmentID.String()
		envID = &s
	}
	connected, _ := json.Marshal(map[string]*string{"environment_id": envID})
	ready, _ := json.Marshal(strconv.Itoa(n))
	first := make([]byte, 0, len(boot)+128)
	first = append(first, "event: connected\ndata: "...)
	first = append(first, connected...)
	first = append(first, "\n\n"...)
	first = append(first, boot...)
	first = append(first, "event: ready\ndata: "...)
	first = append(first, ready...)
	first = append(first, "\n\n"...)
	if !out.Write(first) {
		return
	}

	tick := time.NewTicker(h.keepAlive)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-sub.Done():
			return
		case <-sub.Wake():
			if !out.Write(sub.Take()...) {
				return
			}
		case <-tick.C:
			// The credential is checked again at every keep-alive, so an
			// ended session, a deleted token or user, or a lost membership
			// also ends the stream (SDK key revocations end it at once).
			if _, err := h.identity.Authenticate(ctx, creds); err != nil {
				return
			}
			if !out.Write([]byte(": keep-alive\n\n")) {
				return
			}
		}
	}
}

// snapshotHandler serves GET /flags/snapshot: every segment-expanded flag of
// the SDK key's environment, for clients that cannot hold a stream.
type snapshotHandler struct {
	identity *identity.Service
	hub      *stream.Hub
	errs     errorWriter
	counted  func(status int)
}

func (h snapshotHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("Access-Control-Allow-Origin", "*")
	hdr.Set("Access-Control-Expose-Headers", "X-Service-Environment-Id, ETag")
	if r.Method == http.MethodOptions {
		hdr.Set("Access-Control-Allow-Methods", "GET")
		hdr.Set("Access-Control-Allow-Headers", "Authorization, If-None-Match")
		hdr.Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	status, err := h.serve(w, r)
	if err != nil {
		h.errs.write(w, r, err)
		status = statusOf(classify(err).Kind)
	}
	h.counted(status)
}

func (h snapshotHandler) serve(w http.ResponseWriter, r *http.Request) (int, error) {
	creds := credentialsOf(r)
	if creds.Bearer == "" && creds.Cookie != "" {
		return 0, apperr.E(apperr.BadRequest, "the snapshot needs an SDK key in the Authorization header; session cookies are not supported")
	}
	p, err := h.identity.Authenticate(r.Context(), auth.Credentials{Bearer: creds.Bearer})
	if err != nil {
		return 0, err
	}
	if p.Kind != auth.KindSDKKey {
		return 0, apperr.E(apperr.BadRequest, "the snapshot needs an SDK key")
	}
	if err := access.RequireServerKey(p); err != nil {
		return 0, err
	}
	snap, err := h.hub.Snapshot(r.Context(), p.EnvironmentID)
	if err != nil {
		return 0, err
	}
	// The gzip body is a second representation of the same snapshot: it
	// gets the weak form of the identity body's tag, as NGINX's gzip does
	// (RFC 9110 §8.8.1, §8.8.3: a strong tag names one exact byte sequence;
	// If-None-Match compares weakly, so either form revalidates either
	// body). docs/api.md, "Snapshot compression".
	gz := acceptsGzip(r.Header.Values("Accept-Encoding"))
	tag, body := snap.ETag, snap.Body
	if gz {
		tag = "W/" + snap.ETag
	}
	hdr := w.Header()
	hdr.Set("X-Service-Environment-Id", p.EnvironmentID.String())
	hdr.Set("ETag", tag)
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("Vary", "Accept-Encoding")
	if etag.Matches(r.Header.Get("If-None-Match"), snap.ETag) {
		w.WriteHeader(http.StatusNotModified)
		return http.StatusNotModified, nil
	}
	if gz {
		body = snap.Gzip() // compressed once per snapshot, not per request
		hdr.Set("Content-Encoding", "gzip")
	}
	hdr.Set("Content-Type", "application/json")
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
	return http.StatusOK, nil
}

// acceptsGzip reports whether Accept-Encoding (RFC 9110 §12.5.3) gives gzip
// a weight above 0: "gzip" or "x-gzip" by name, or else "*". A missing
// header means identity only: clients that did not ask get plain JSON.
func acceptsGzip(values []string) bool {
	named, star := -1.0, -1.0
	for _, v := range values {
		for _, item := range strings.Split(v, ",") {
			coding, params, _ := strings.Cut(item, ";")
			q := 1.0
			for _, p := range strings.Split(params, ";") {
				name, val, ok := strings.Cut(strings.TrimSpace(p), "=")
				if ok && strings.EqualFold(strings.TrimSpace(name), "q") {
					f, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
					if err != nil || f < 0 || f > 1 {
						f = 0 // malformed weight: do not guess
					}
					q = f
				}
			}
			switch c := strings.ToLower(strings.TrimSpace(coding)); c {
			case "gzip", "x-gzip":
				named = max(named, q)
			case "*":
				star = max(star, q)
			}
		}
	}
	if named >= 0 {
		return named > 0
	}
	return star > 0
}
