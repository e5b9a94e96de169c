// Package apperr is Switchyard's one error type. Every layer returns *Error
// values (or wraps them); the HTTP layer maps Kind to a status in one place.
// Message is safe to show to clients; Err is logged only.
package apperr

import (
	"errors"
	"fmt"
)

// Kind classifies an error by what the client can do about it.
type Kind int

// The kinds, in the order of the table in docs/reference/code-style.md, §4
// Errors.
const (
	Internal         Kind = iota // a fault of ours; the client sees a generic message
	Invalid                      // well-formed input that breaks a rule (422)
	BadRequest                   // unparseable or wrongly typed input (400)
	Unauthenticated              // missing, invalid or revoked credentials (401)
	Forbidden                    // authenticated but not allowed (403)
	NotFound                     // no such resource, or none the caller may see (404)
	MethodNotAllowed             // known path, unsupported method (405)
	Conflict                     // duplicate, or blocked by the current state (409)
	TooLarge                     // body or batch over its limit (413)
	TooManyRequests              // login lockout (429)
	Unavailable                  // a dependency is down (503)
)

var kindNames = [...]string{
	Internal:         "internal",
	Invalid:          "invalid",
	BadRequest:       "bad_request",
	Unauthenticated:  "unauthenticated",
	Forbidden:        "forbidden",
	NotFound:         "not_found",
	MethodNotAllowed: "method_not_allowed",
	Conflict:         "conflict",
	TooLarge:         "too_large",
	TooManyRequests:  "too_many_requests",
	Unavailable:      "unavailable",
}

// String names the kind for logs.
func (k Kind) String() string {
	if int(k) >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Detail names one offending field of a validation failure.
type Detail struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Error is the error type every Switchyard layer returns.
type Error struct {
	Kind    Kind
	Message string         // safe to show to the client
	Details []Detail       // per-field validation failures, shown as "details"
	Extra   map[string]any // extra top-level body fields (attempts_remaining, retry_after_seconds)
	Err     error          // the cause; logged, never shown
}

// E returns an error of kind with a client-safe message.
func E(kind Kind, msg string) *Error { return &Error{Kind: kind, Message: msg} }

// Ef is E with a format string.
func Ef(kind Kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an error of kind with a client-safe message and a cause.
func Wrap(kind Kind, msg string, err error) *Error {
	return &Error{Kind: kind, Message: msg, Err: err}
}

// DatabaseUnavailable returns the Unavailable error of a database that could
// not be reached, cause being the driver's error. store.AdaptError and the
// HTTP error writer both build it, so every outage answers with one message.
func DatabaseUnavailable(cause error) *Error {
	return Wrap(Unavailable, "the database is unavailable; try again shortly", cause)
}

// ReadTooSlow returns the Unavailable error of a bounded read that ran past
// its bound (a statement timeout, or the measurement reads' own deadline).
func ReadTooSlow(cause error) *Error {
	return Wrap(Unavailable, "the read took too long; try again shortly", cause)
}

// Field returns an Invalid error naming one field.
func Field(field, msg string) *Error {
	return &Error{Kind: Invalid, Message: field + ": " + msg, Details: []Detail{{Field: field, Message: msg}}}
}

// With returns a copy of e carrying an extra top-level body field.
func (e *Error) With(key string, value any) *Error {
	c := *e
	c.Extra = make(map[string]any, len(e.Extra)+1)
	for k, v := range e.Extra {
		c.Extra[k] = v
	}
	c.Extra[key] = value
	return &c
}

func (e *Error) Error() string {
	switch {
	case e.Err != nil && e.Message != "":
		return e.Message + ": " + e.Err.Error()
	case e.Err != nil:
		return e.Err.Error()
	default:
		return e.Message
	}
}

func (e *Error) Unwrap() error { return e.Err }

// KindOf reports the kind of the first *Error in err's chain, or Internal.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Internal
}

// As returns the first *Error in err's chain, or nil.
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// Problems collects validation failures so one 422 names every bad field.
type Problems []Detail

// Add records one bad field.
func (p *Problems) Add(field, format string, args ...any) {
	*p = append(*p, Detail{Field: field, Message: fmt.Sprintf(format, args...)})
}

// Err is nil without problems, else one Invalid error naming them all.
func (p Problems) Err() error {
	if len(p) == 0 {
		return nil
	}
	msg := p[0].Field + ": " + p[0].Message
	if len(p) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(p)-1)
	}
	return &Error{Kind: Invalid, Message: msg, Details: p}
}
