package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
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
						ProjectID: project.ID, EnvironmentID: env.ID, Name: "k",
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
					ProjectID: project.ID, EnvironmentID: uuid.New(), Name: "k",
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
