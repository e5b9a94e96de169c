package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/gorilla/mux"

	"github.com/switchyard/switchyard/gen/apiserver"
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

// retryAfterSeconds is the Retry-After of every 503: long enough that a
// restarting PostgreSQL is usually back, short enough that clients (the SDK's
// poll, a load balancer's probe) notice its return promptly.
const retryAfterSeconds = 5

// errorWriter writes every error response of the API. It is the only place
// that logs request errors, so nothing else logs and returns the same error.
type errorWriter struct {
	logger *slog.Logger
	// unreachable reports whether an error means the database could not be
	// reached (store.Unreachable, passed in by app: this package does not
	// import store). Nil: no error does.
	unreachable func(error) bool
}

// write classifies err, logs it when it is our fault, and writes the JSON body
// {"error": ..., "details": [...], ...extra}.
func (ew errorWriter) write(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		// The client went away; there is nobody to answer and nothing to log.
		return
	}
	e := classify(queryParamErrors(r, err))
	if overridable(e.Kind) && ew.unreachable != nil && ew.unreachable(err) {
		// An outage beats whatever kind the error was wrapped in on its way
		// up: the services wrap driver errors with fmt.Errorf (Internal), and a
		// credential lookup that never reached the database must not read
		// as a bad credential (an SDK that gets 401 drops its key).
		e = apperr.DatabaseUnavailable(err)
	}
	status := statusOf(e.Kind)
	msg := e.Message
	switch {
	case status == http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds))
	case status == http.StatusTooManyRequests:
		// The lockout says when in its body (docs/reference/identity.md, Login
		// lockout); the header says the same for clients that only read
		// headers.
		if secs, ok := e.Extra["retry_after_seconds"].(int); ok {
			w.Header().Set("Retry-After", strconv.Itoa(secs))
		}
	}
	if e.Kind == apperr.Unavailable {
		// Not a bug: logged once per request as a warning, with the cause.
		ew.logger.WarnContext(r.Context(), "request failed: dependency unavailable",
			"method", r.Method, "path", r.URL.Path, "status", status, "err", err.Error())
		if msg == "" {
			msg = http.StatusText(status)
		}
	} else if status >= http.StatusInternalServerError {
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

// overridable reports whether an error of kind k is answered 503 when its
// cause shows the database unreachable. Kinds about the request itself stay:
// they were decided before the database mattered, and their causes can look
// like a broken connection (a truncated JSON body ends in
// io.ErrUnexpectedEOF, as a dropped database connection does).
func overridable(k apperr.Kind) bool {
	switch k {
	case apperr.BadRequest, apperr.Invalid, apperr.TooLarge, apperr.MethodNotAllowed, apperr.Unavailable:
		return false
	}
	return true
}

// writeJSON writes v as a JSON response with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// queryParamErrors tells a query parameter's bad format from a path
// parameter's: the generated router reports both as an
// InvalidParamFormatError, and only a path's means "not found".
func queryParamErrors(r *http.Request, err error) error {
	var invalid *apiserver.InvalidParamFormatError
	if !errors.As(err, &invalid) {
		return err
	}
	if _, inPath := mux.Vars(r)[invalid.ParamName]; inPath {
		return err
	}
	return paramError(invalid.ParamName, "query", "has an invalid format")
}
