package store

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/switchyard/switchyard/server/apperr"
)

// SQLSTATE codes AdaptError translates (PostgreSQL Appendix A).
const (
	codeForeignKeyViolation = "23503"
	codeUniqueViolation     = "23505"
	codeCheckViolation      = "23514"
)

// constraintError is the client-facing translation of one named constraint of
// migrations/. field is set for check constraints that guard one input field.
type constraintError struct {
	field   string
	message string
}

// constraintMessage returns the translation of a constraint (or unique index)
// name, and false for names without one, which get a generic message of their
// SQLSTATE's kind. Keep it in step with the constraint names in migrations/.
func constraintMessage(name string) (constraintError, bool) {
	switch name {
	// 23505 unique violations: Conflict.
	case "users_email_key":
		return constraintError{message: "email already in use"}, true
	case "projects_slug_key":
		return constraintError{message: "a project with this slug already exists"}, true
	case "project_members_pkey":
		return constraintError{message: "user is already a member of this project"}, true
	case "environments_project_id_slug_key":
		return constraintError{message: "an environment with this slug already exists in this project"}, true
	case "flags_environment_id_key_key":
		return constraintError{message: "a flag with this key already exists in this environment"}, true
	case "segments_environment_id_key_key":
		return constraintError{message: "a segment with this key already exists in this environment"}, true
	case "experiments_environment_id_key_key":
		return constraintError{message: "an experiment with this key already exists in this environment"}, true
	case "environments_one_default_key":
		return constraintError{message: "the project already has a default environment"}, true
	// 23503 foreign key violations: NotFound.
	case "project_members_user_id_fkey":
		return constraintError{message: "user not found"}, true
	case "sdk_keys_environment_fkey":
		return constraintError{message: "environment not found in this project"}, true
	// 23514 check violations: Invalid.
	case "workspace_name_check":
		return constraintError{field: "workspace_name", message: "must not be empty"}, true
	case "users_email_check":
		return constraintError{field: "email", message: "must not be empty"}, true
	case "users_role_check":
		return constraintError{field: "role", message: "must be admin, editor or viewer"}, true
	case "projects_name_check":
		return constraintError{field: "name", message: "must not be empty"}, true
	case "projects_slug_check":
		return constraintError{field: "name", message: "must contain at least one letter or digit"}, true
	case "project_members_role_check":
		return constraintError{field: "role", message: "must be admin, editor or viewer"}, true
	case "environments_name_check":
		return constraintError{field: "name", message: "must be 1 to 100 characters"}, true
	case "environments_slug_check":
		return constraintError{field: "slug", message: "must be at most 64 lowercase letters, digits or hyphens"}, true
	case "environments_color_check":
		return constraintError{field: "color", message: "must be a hex color #rgb or #rrggbb"}, true
	case "personal_access_tokens_scope_check":
		return constraintError{field: "scope", message: "must be read_only or read_write"}, true
	case "flags_key_check":
		return constraintError{field: "key", message: "must be 1 to 100 ASCII letters, digits, underscores or hyphens"}, true
	case "flags_rollout_percentage_check":
		return constraintError{field: "rollout_percentage", message: "must be between 0 and 100"}, true
	case "flags_flag_type_check":
		return constraintError{field: "flag_type", message: "must be boolean, string, integer or json"}, true
	case "segments_key_check":
		return constraintError{field: "key", message: "must be 1 to 100 ASCII letters, digits, underscores or hyphens"}, true
	case "segments_name_check":
		return constraintError{field: "name", message: "must not be empty"}, true
	case "experiments_key_check":
		return constraintError{field: "key", message: "must be 1 to 100 ASCII letters, digits, underscores or hyphens"}, true
	case "experiments_name_check":
		return constraintError{field: "name", message: "must not be empty"}, true
	case "experiments_flag_key_check":
		return constraintError{field: "flag_key", message: "must be 1 to 100 ASCII letters, digits, underscores or hyphens"}, true
	case "experiments_goal_event_key_check":
		return constraintError{field: "goal_event_key", message: "must be 1 to 100 ASCII letters, digits, underscores or hyphens"}, true
	case "experiments_status_check":
		return constraintError{field: "status", message: "must be running, paused or completed"}, true
	case "change_requests_status_check":
		return constraintError{field: "status", message: "must be pending, approved, rejected or cancelled"}, true
	case "webhooks_name_check":
		return constraintError{field: "name", message: "must not be empty"}, true
	case "webhooks_url_check":
		return constraintError{field: "url", message: "must not be empty"}, true
	case "chat_integrations_kind_check":
		return constraintError{field: "kind", message: "must be slack or teams"}, true
	case "chat_integrations_webhook_url_check":
		return constraintError{field: "webhook_url", message: "must not be empty"}, true
	case "chat_integrations_events_check":
		return constraintError{field: "events", message: "contains an unknown event name"}, true
	default:
		return constraintError{}, false
	}
}

// SQLSTATEs that say the server is going away or not yet accepting sessions
// (class 57, operator intervention); the rest of class 57 (query_canceled,
// database_dropped) does not mean the database is unreachable.
const (
	codeAdminShutdown = "57P01"
	codeCrashShutdown = "57P02"
	codeCannotConnect = "57P03"
	// codeQueryCanceled is a statement that ran past statement_timeout
	// (OpenBounded) or was cancelled by an operator.
	codeQueryCanceled = "57014"
)

// Unreachable reports whether err, however it was wrapped, means the database
// could not be reached: the request may well succeed once it is back, so the
// client is told 503, never 500 (a bug) or 4xx (its fault). It is the one
// place that recognises an outage:
//
//   - a failed connection attempt (*pgconn.ConnectError: refused, timed out,
//     or turned away because the server is starting or stopping);
//   - SQLSTATE class 08 (connection exception) and 57P01 admin_shutdown,
//     57P02 crash_shutdown, 57P03 cannot_connect_now: what a session hears
//     when the server stops under it;
//   - a connection that broke mid-statement: an unexpected EOF, a network
//     error, or the driver's "conn closed" after an earlier break.
//
// A context cancellation is the caller's own decision and never counts, nor
// does a timeout of the caller's own context once connected.
func Unreachable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case strings.HasPrefix(pgErr.Code, "08"),
			pgErr.Code == codeAdminShutdown, pgErr.Code == codeCrashShutdown, pgErr.Code == codeCannotConnect:
			return true
		}
		return false
	}
	// *net.OpError rather than net.Error: context.DeadlineExceeded is a
	// net.Error too, and the caller's own deadline is not an outage.
	var opErr *net.OpError
	return errors.As(err, &opErr) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, net.ErrClosed)
}

// AdaptError translates a database error into an *apperr.Error, the one place
// where Switchyard does so (docs/reference/code-style.md, §4 Errors). It
// decides on the SQLSTATE and the constraint name, never on message text:
//
//   - an unreachable database (see Unreachable): Unavailable
//   - pgx.ErrNoRows: NotFound
//   - 23505 unique_violation: Conflict
//   - 23503 foreign_key_violation: NotFound (the referenced row is missing)
//   - 23514 check_violation: Invalid
//
// nil stays nil; an error that already carries an *apperr.Error and a context
// cancellation or deadline pass through unchanged; anything else becomes
// Internal with err as its cause. Callers that need a more specific message
// (which flag was not found) check the kind and wrap it themselves.
func AdaptError(err error) error {
	if err == nil || apperr.As(err) != nil {
		return err
	}
	// Before the context check: a connect that timed out wraps a deadline.
	if Unreachable(err) {
		return apperr.DatabaseUnavailable(err)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return apperr.Wrap(apperr.NotFound, "not found", err)
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return apperr.Wrap(apperr.Internal, "internal error", err)
	}
	if pgErr.Code == codeQueryCanceled {
		return apperr.ReadTooSlow(err)
	}
	known, ok := constraintMessage(pgErr.ConstraintName)
	switch pgErr.Code {
	case codeUniqueViolation:
		if !ok {
			known.message = "already exists"
		}
		return apperr.Wrap(apperr.Conflict, known.message, err)
	case codeForeignKeyViolation:
		if !ok {
			known.message = "referenced resource not found"
		}
		return apperr.Wrap(apperr.NotFound, known.message, err)
	case codeCheckViolation:
		if !ok {
			return apperr.Wrap(apperr.Invalid, "invalid value", err)
		}
		e := apperr.Field(known.field, known.message)
		e.Err = err
		return e
	default:
		return apperr.Wrap(apperr.Internal, "internal error", err)
	}
}
