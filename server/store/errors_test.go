package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/internal/testenv"
	"github.com/switchyard/switchyard/server/store"
)

// fixture creates a project with one environment and returns both.
func fixture(t *testing.T, pool *pgxpool.Pool) (db.Project, db.Environment) {
	t.Helper()
	q := db.New(pool)
	p, err := q.CreateProject(t.Context(), db.CreateProjectParams{Name: "Default", Slug: "default"})
	if err != nil {
		t.Fatalf("create project: %v", err)
	}
	e, err := q.CreateEnvironment(t.Context(), db.CreateEnvironmentParams{
		ProjectID: p.ID, Name: "Production", Slug: "production", Color: "#ef4444", IsDefault: true,
	})
	if err != nil {
		t.Fatalf("create environment: %v", err)
	}
	return p, e
}

func TestAdaptErrorFromRealViolations(t *testing.T) {
	t.Parallel()
	pool := testenv.Pool(t)
	project, env := fixture(t, pool)
	q := db.New(pool)
	ctx := t.Context()

	tests := []struct {
		name        string
		run         func() error
		wantKind    apperr.Kind
		wantMessage string
		wantDetails []apperr.Detail
	}{
		{
			name:        "no rows is NotFound",
			run:         func() error { _, err := q.GetWorkspace(ctx); return err },
			wantKind:    apperr.NotFound,
			wantMessage: "not found",
		},
		{
			name: "a statement past the bounded pool's timeout is Unavailable",
			run: func() error {
				bounded, err := store.OpenBounded(ctx, pool.Config().ConnString(), 1, 50*time.Millisecond)
				if err != nil {
					return err
				}
				defer bounded.Close()
				_, err = bounded.Exec(ctx, "SELECT pg_sleep(1)")
				return err
			},
			wantKind:    apperr.Unavailable,
			wantMessage: "the read took too long; try again shortly",
		},
		{
			name: "23505 named constraint is Conflict with its message",
			run: func() error {
				_, err := q.CreateProject(ctx, db.CreateProjectParams{Name: "Default", Slug: "default"})
				return err
			},
			wantKind:    apperr.Conflict,
			wantMessage: "a project with this slug already exists",
		},
		{
			name: "23505 on a unique expression index is Conflict",
			run: func() error {
				for _, email := range []string{"a@example.com", "A@Example.com"} {
					if _, err := q.CreateUser(ctx, db.CreateUserParams{
						Name: "A", Email: email, PasswordHash: "x", Role: "admin",
					}); err != nil {
						return err
					}
				}
				return nil
			},
			wantKind:    apperr.Conflict,
			wantMessage: "email already in use",
		},
		{
			name: "23505 unnamed constraint is Conflict",
			run: func() error {
				for range 2 {
					if _, err := q.CreateSDKKey(ctx, db.CreateSDKKeyParams{
						ProjectID: project.ID, EnvironmentID: env.ID, Name: "k", Kind: "server",
						KeyHash: make([]byte, 32), Prefix: "sk_live_0000",
					}); err != nil {
						return err
					}
				}
				return nil
			},
			wantKind:    apperr.Conflict,
			wantMessage: "already exists",
		},
		{
			name: "23503 is NotFound",
			run: func() error {
				_, err := q.CreateSDKKey(ctx, db.CreateSDKKeyParams{
					ProjectID: project.ID, EnvironmentID: uuid.New(), Name: "k", Kind: "server",
					KeyHash: bytes.Repeat([]byte{1}, 32), Prefix: "sk_live_1111",
				})
				return err
			},
			wantKind:    apperr.NotFound,
			wantMessage: "environment not found in this project",
		},
		{
			name: "23514 named constraint is Invalid with field details",
			run: func() error {
				_, err := q.CreateEnvironment(ctx, db.CreateEnvironmentParams{
					ProjectID: project.ID, Name: "Bad", Slug: "Not A Slug", Color: "#fff",
				})
				return err
			},
			wantKind:    apperr.Invalid,
			wantMessage: "slug: must be at most 64 lowercase letters, digits or hyphens",
			wantDetails: []apperr.Detail{{Field: "slug", Message: "must be at most 64 lowercase letters, digits or hyphens"}},
		},
		{
			name: "23514 unnamed constraint is Invalid",
			run: func() error {
				_, err := pool.Exec(ctx, "INSERT INTO login_attempts (email, window_started_at) VALUES ('UPPER@X', now())")
				return err
			},
			wantKind:    apperr.Invalid,
			wantMessage: "invalid value",
		},
		{
			name: "23514 inside a committed transaction is found through wrapping",
			run: func() error {
				return store.WithTx(ctx, pool, func(q *db.Queries) error {
					_, err := q.CreateEnvironment(ctx, db.CreateEnvironmentParams{
						ProjectID: project.ID, Name: "Staging", Slug: "staging", Color: "red",
					})
					return fmt.Errorf("create environment: %w", err)
				})
			},
			wantKind:    apperr.Invalid,
			wantMessage: "color: must be a hex color #rgb or #rrggbb",
			wantDetails: []apperr.Detail{{Field: "color", Message: "must be a hex color #rgb or #rrggbb"}},
		},
		{
			name: "other SQLSTATE is Internal",
			run: func() error {
				_, err := pool.Exec(ctx, "SELECT 1/0")
				return err
			},
			wantKind:    apperr.Internal,
			wantMessage: "internal error",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cause := tt.run()
			if cause == nil {
				t.Fatal("statement succeeded, want a database error")
			}
			got := apperr.As(store.AdaptError(cause))
			if got == nil {
				t.Fatalf("AdaptError(%v) is no *apperr.Error", cause)
			}
			if got.Kind != tt.wantKind || got.Message != tt.wantMessage {
				t.Errorf("AdaptError = (%v, %q), want (%v, %q)", got.Kind, got.Message, tt.wantKind, tt.wantMessage)
			}
			if diff := cmp.Diff(tt.wantDetails, got.Details); diff != "" {
				t.Errorf("details (-want +got):\n%s", diff)
			}
			if !errors.Is(got, cause) {
				t.Errorf("AdaptError lost its cause %v", cause)
			}
		})
	}
}

func TestAdaptErrorPassThrough(t *testing.T) {
	t.Parallel()
	already := apperr.E(apperr.Forbidden, "no")
	wrappedCancel := fmt.Errorf("query: %w", context.Canceled)
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"nil", nil, nil},
		{"apperr unchanged", already, already},
		{"context cancellation unchanged", wrappedCancel, wrappedCancel},
		{"deadline unchanged", context.DeadlineExceeded, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := store.AdaptError(tt.err); got != tt.want {
				t.Errorf("AdaptError(%v) = %v, want it unchanged", tt.err, got)
			}
		})
	}
	t.Run("plain error becomes Internal", func(t *testing.T) {
		t.Parallel()
		plain := errors.New("connection reset")
		got := store.AdaptError(plain)
		if apperr.KindOf(got) != apperr.Internal || !errors.Is(got, plain) {
			t.Errorf("AdaptError(%v) = %v (kind %v), want Internal wrapping it", plain, got, apperr.KindOf(got))
		}
	})
}

func TestUnreachable(t *testing.T) {
	t.Parallel()
	ctx := t.Context()

	// Real driver errors: a refused connection, a session the server ends
	// (what a stopping server does to every session), and the use of the
	// connection it left behind.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	_, refused := pgx.Connect(ctx, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", closedPort))
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, connectCancelled := pgx.Connect(cancelled, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", closedPort))

	pool := testenv.Pool(t)
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, terminated := conn.Exec(ctx, "SELECT pg_terminate_backend(pg_backend_pid())")
	_, afterwards := conn.Exec(ctx, "SELECT 1")
	conn.Release()
	_, syntax := pool.Exec(ctx, "SELEC 1")

	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"refused connection", refused, true},
		{"refused connection wrapped by core", fmt.Errorf("look up sdk key: %w", refused), true},
		{"session ended by the server (57P01)", terminated, true},
		{"connection closed after that", afterwards, true},
		{"connection exception class 08", &pgconn.PgError{Code: "08006"}, true},
		{"crash shutdown 57P02", &pgconn.PgError{Code: "57P02"}, true},
		{"cannot connect now 57P03", fmt.Errorf("begin transaction: %w", &pgconn.PgError{Code: "57P03"}), true},
		{"broken mid-statement", fmt.Errorf("failed to receive message: %w", io.ErrUnexpectedEOF), true},
		{"nil", nil, false},
		{"the caller cancelled its connect", connectCancelled, false},
		{"the caller cancelled", fmt.Errorf("query: %w", context.Canceled), false},
		{"the caller's deadline", fmt.Errorf("query: %w", context.DeadlineExceeded), false},
		{"query canceled 57014", &pgconn.PgError{Code: "57014"}, false},
		{"a syntax error", syntax, false},
		{"no rows", pgx.ErrNoRows, false},
		{"a plain error", errors.New("boom"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.err == nil && tt.name != "nil" {
				t.Fatal("the arranged operation succeeded; want an error")
			}
			if got := store.Unreachable(tt.err); got != tt.want {
				t.Errorf("Unreachable(%v) = %v, want %v", tt.err, got, tt.want)
			}
			if !tt.want || tt.err == nil {
				return
			}
			got := apperr.As(store.AdaptError(tt.err))
			if got == nil || got.Kind != apperr.Unavailable || !errors.Is(got, tt.err) {
				t.Errorf("AdaptError(%v) = %v, want Unavailable keeping the cause", tt.err, got)
			}
		})
	}
}
