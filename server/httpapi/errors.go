package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/switchyard/switchyard/server/apperr"
)

// statusOf is the one map from error kinds to HTTP statuses.
func statusOf(k apperr.Kind) int {
	switch k {
	case apperr.Invalid:
		return http.StatusUnprocessableEntity
	case apperr.BadRequest:
		return http.StatusBadRequest
	case apperr.Unauthenticated:
		return http.StatusUnauthorized
	case apperr.Forbidden:
		return http.StatusForbidden
	case apperr.NotFound:
		return http.StatusNotFound
	case apperr.MethodNotAllowed:
		return http.StatusMethodNotAllowed
	case apperr.Conflict:
		return http.StatusConflict
	case apperr.TooLarge:
		return http.StatusRequestEntityTooLarge
	case apperr.TooManyRequests:
		return http.StatusTooManyRequests
	case apperr.Unavailable:
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError
	}
}

// errorWriter writes every error response of the API. It is the only place
// that logs request errors, so nothing else logs and returns the same error.
type errorWriter struct {
	logger *slog.Logger
}

// write classifies err, logs it when it is our fault, and writes the JSON body
// {"error": ..., "details": [...], ...extra}.
func (ew errorWriter) write(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		// The client went away; there is nobody to answer and nothing to log.
		return
	}
	e := classify(err)
	status := statusOf(e.Kind)
	msg := e.Message
	if status >= http.StatusInternalServerError {
		ew.logger.ErrorContext(r.Context(), "request failed",
			"method", r.Method, "path", r.URL.Path, "status", status, "err", err.Error())
		if e.Kind == apperr.Internal || msg == "" {
			// Never show internal detail (SQL, stack, paths) to clients.
			msg = http.StatusText(status)
		}
	} else {
		// The client-facing message is enough here; kin-openapi's full
		// error text repeats the whole schema.
		ew.logger.DebugContext(r.Context(), "request rejected",
			"method", r.Method, "path", r.URL.Path, "status", status, "err", msg)
	}
	body := make(map[string]any, 2+len(e.Extra))
	for k, v := range e.Extra {
		body[k] = v
	}
	body["error"] = msg
	if len(e.Details) > 0 {
		body["details"] = e.Details
	}
	writeJSON(w, status, body)
}

// writeJSON writes v as a JSON response with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
