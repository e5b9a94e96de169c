package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/core"
	"github.com/switchyard/switchyard/server/stream"
)

// writeTimeout bounds each write to a stream client: a client that cannot
// take one event within it is gone.
const writeTimeout = 10 * time.Second

// streamHandler serves GET /stream (spec, Events: Stream events).
type streamHandler struct {
	core      *core.Service
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
	p, err := h.core.Authenticate(ctx, creds)
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
	envs, err := h.core.StreamEnvironments(ctx, p, want)
	if err != nil {
		h.errs.write(w, r, err)
		return
	}
	// Subscribe first: the bootstrap and the live queue are cut at one
	// instant, so no write falls between them.
	sub, boot, n, err := h.hub.Subscribe(ctx, envs, p.KeyID)
	if err != nil {
		if errors.Is(err, stream.ErrClosed) {
			err = apperr.Wrap(apperr.Unavailable, "the server is shutting down", err)
		}
		h.errs.write(w, r, err)
		return
	}
	defer h.hub.Unsubscribe(sub)

	hdr := w.Header()
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("X-Accel-Buffering", "no")
	hdr.Set("Access-Control-Allow-Origin", "*")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)

	// connected.environment_id is the SDK key's environment, null for
	// cookie and token streams (decisions.md).
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
	if !write(rc, w, first) {
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
			if !writeAll(rc, w, sub.Take()) {
				return
			}
		case <-tick.C:
			// The credential is checked again at every keep-alive, so an
			// ended session, a deleted token or user, or a lost membership
			// also ends the stream (SDK key revocations end it at once).
			if _, err := h.core.Authenticate(ctx, creds); err != nil {
				return
			}
			if !write(rc, w, []byte(": keep-alive\n\n")) {
				return
			}
		}
	}
}

// write sends one chunk with a deadline and flushes it.
func write(rc *http.ResponseController, w http.ResponseWriter, b []byte) bool {
	return writeAll(rc, w, [][]byte{b})
}

// writeAll sends chunks under one deadline and one flush.
func writeAll(rc *http.ResponseController, w http.ResponseWriter, chunks [][]byte) bool {
	_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
	for _, b := range chunks {
		if _, err := w.Write(b); err != nil {
			return false
		}
	}
	return rc.Flush() == nil
}

// snapshotHandler serves GET /flags/snapshot: every segment-expanded flag of
// the SDK key's environment, for clients that cannot hold a stream.
type snapshotHandler struct {
	core    *core.Service
	hub     *stream.Hub
	errs    errorWriter
	counted func(status int)
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
	p, err := h.core.Authenticate(r.Context(), core.Credentials{Bearer: creds.Bearer})
	if err != nil {
		return 0, err
	}
	if p.Kind != auth.KindSDKKey {
		return 0, apperr.E(apperr.BadRequest, "the snapshot needs an SDK key")
	}
	snap, err := h.hub.Snapshot(r.Context(), p.EnvironmentID)
	if err != nil {
		return 0, err
	}
	hdr := w.Header()
	hdr.Set("X-Service-Environment-Id", p.EnvironmentID.String())
	hdr.Set("ETag", snap.ETag)
	hdr.Set("Cache-Control", "no-cache")
	if etagMatches(r.Header.Get("If-None-Match"), snap.ETag) {
		w.WriteHeader(http.StatusNotModified)
		return http.StatusNotModified, nil
	}
	hdr.Set("Content-Type", "application/json")
	hdr.Set("Content-Length", strconv.Itoa(len(snap.Body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(snap.Body)
	return http.StatusOK, nil
}

// etagMatches applies If-None-Match (RFC 9110 §13.1.2): "*" or any listed
// tag, weak or not, matches.
func etagMatches(header, etag string) bool {
	for _, tag := range strings.Split(header, ",") {
		tag = strings.TrimSpace(tag)
		if tag == "*" || tag == etag || tag == "W/"+etag {
			return true
		}
	}
	return false
}
