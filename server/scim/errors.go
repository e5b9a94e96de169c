package scim

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/switchyard/switchyard/server/apperr"
)

// SCIM error types (RFC 7644, section 3.12) this server answers with.
const (
	scimInvalidFilter = "invalidFilter"
	scimInvalidValue  = "invalidValue"
	scimInvalidPath   = "invalidPath"
	scimInvalidSyntax = "invalidSyntax"
	scimUniqueness    = "uniqueness"
	scimNoTarget      = "noTarget"
)

// Error is a SCIM protocol error: an HTTP status, a scimType and a detail
// safe to show.
type Error struct {
	Status   int
	SCIMType string
	Detail   string
}

func (e *Error) Error() string { return fmt.Sprintf("scim %d %s: %s", e.Status, e.SCIMType, e.Detail) }

func errInvalidFilter(f string) error {
	return &Error{http.StatusBadRequest, scimInvalidFilter, fmt.Sprintf("unsupported filter %q: only attr eq \"value\" is", f)}
}

func errInvalidPath(p string) error {
	return &Error{http.StatusBadRequest, scimInvalidPath, fmt.Sprintf("unsupported path %q", p)}
}

func errInvalidValue(format string, args ...any) error {
	return &Error{http.StatusBadRequest, scimInvalidValue, fmt.Sprintf(format, args...)}
}

func errInvalidSyntax(detail string) error {
	return &Error{http.StatusBadRequest, scimInvalidSyntax, detail}
}

func errUniqueness(detail string) error {
	return &Error{http.StatusConflict, scimUniqueness, detail}
}

func errNotFound(what string) error {
	return &Error{Status: http.StatusNotFound, Detail: what + " not found"}
}

// errorBody is a SCIM error response (RFC 7644, section 3.12): status is a
// string there.
type errorBody struct {
	Schemas  []string `json:"schemas"`
	Status   string   `json:"status"`
	SCIMType string   `json:"scimType,omitempty"`
	Detail   string   `json:"detail,omitempty"`
}

const errorSchema = "urn:ietf:params:scim:api:messages:2.0:Error"

// toError turns any error into the SCIM error to answer: SCIM's own as they
// are, the service's kinds by the project's status table (a conflict is a
// uniqueness conflict, a broken rule an invalidValue), everything else 500.
func toError(err error) *Error {
	var se *Error
	if errors.As(err, &se) {
		return se
	}
	ae := apperr.As(err)
	if ae == nil {
		return &Error{Status: http.StatusInternalServerError, Detail: "internal error"}
	}
	switch ae.Kind {
	case apperr.Unauthenticated:
		return &Error{Status: http.StatusUnauthorized, Detail: ae.Message}
	case apperr.Forbidden:
		return &Error{Status: http.StatusForbidden, Detail: ae.Message}
	case apperr.NotFound:
		return &Error{Status: http.StatusNotFound, Detail: ae.Message}
	case apperr.Conflict:
		return &Error{Status: http.StatusConflict, SCIMType: scimUniqueness, Detail: ae.Message}
	case apperr.Invalid:
		return &Error{Status: http.StatusBadRequest, SCIMType: scimInvalidValue, Detail: ae.Message}
	case apperr.BadRequest:
		return &Error{Status: http.StatusBadRequest, SCIMType: scimInvalidSyntax, Detail: ae.Message}
	case apperr.TooLarge:
		return &Error{Status: http.StatusRequestEntityTooLarge, Detail: ae.Message}
	case apperr.Unavailable:
		return &Error{Status: http.StatusServiceUnavailable, Detail: ae.Message}
	}
	return &Error{Status: http.StatusInternalServerError, Detail: "internal error"}
}

func (e *Error) body() errorBody {
	return errorBody{Schemas: []string{errorSchema}, Status: strconv.Itoa(e.Status), SCIMType: e.SCIMType, Detail: e.Detail}
}
