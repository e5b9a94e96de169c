package store_test

import (
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/internal/testenv"
	"github.com/switchyard/switchyard/server/store"
)

func countProjects(t *testing.T, pool *pgxpool.Pool) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(t.Context(), "SELECT count(*) FROM projects").Scan(&n); err != nil {
		t.Fatalf("count projects: %v", err)
	}
	return n
}

func TestWithTx(t *testing.T) {
	t.Parallel()
	errBoom := errors.New("boom")
	tests := []struct {
		name      string
		fn        func(q *db.Queries) error
		wantErr   error
		wantPanic bool
		wantRows  int
	}{
		{
			name: "commits on success",
			fn: func(q *db.Queries) error {
				_, err := q.CreateProject(t.Context(), db.CreateProjectParams{Name: "A", Slug: "a"})
				return err
			},
			wantRows: 1,
		},
		{
			name: "rolls back on error",
			fn: func(q *db.Queries) error {
				if _, err := q.CreateProject(t.Context(), db.CreateProjectParams{Name: "A", Slug: "a"}); err != nil {
					return err
				}
				return errBoom
			},
			wantErr: errBoom,
		},
		{
			name: "rolls back on panic",
			fn: func(q *db.Queries) error {
				if _, err := q.CreateProject(t.Context(), db.CreateProjectParams{Name: "A", Slug: "a"}); err != nil {
					return err
				}
				panic(errBoom)
			},
			wantPanic: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pool := testenv.Pool(t)
			var err error
			panicked := func() (p bool) {
				defer func() { p = recover() != nil }()
				err = store.WithTx(t.Context(), pool, tt.fn)
				return false
			}()
			if panicked != tt.wantPanic {
				t.Errorf("panicked = %v, want %v", panicked, tt.wantPanic)
			}
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("WithTx error = %v, want %v", err, tt.wantErr)
			}
			if got := countProjects(t, pool); got != tt.wantRows {
				t.Errorf("projects after WithTx = %d, want %d", got, tt.wantRows)
			}
		})
	}
}

func TestWithTxV(t *testing.T) {
	t.Parallel()
	pool := testenv.Pool(t)
	p, err := store.WithTxV(t.Context(), pool, func(q *db.Queries) (db.Project, error) {
		return q.CreateProject(t.Context(), db.CreateProjectParams{Name: "A", Slug: "a"})
	})
	if err != nil {
		t.Fatalf("WithTxV: %v", err)
	}
	if p.Slug != "a" {
		t.Errorf("WithTxV returned project with slug %q, want %q", p.Slug, "a")
	}

	errBoom := errors.New("boom")
	p, err = store.WithTxV(t.Context(), pool, func(q *db.Queries) (db.Project, error) {
		p, err := q.CreateProject(t.Context(), db.CreateProjectParams{Name: "B", Slug: "b"})
		if err != nil {
			return p, err
		}
		return p, errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Errorf("WithTxV error = %v, want %v", err, errBoom)
	}
	if p.Slug != "" {
		t.Errorf("WithTxV returned %+v on error, want the zero value", p)
	}
	if got := countProjects(t, pool); got != 1 {
		t.Errorf("projects = %d, want 1 (the failed transaction must roll back)", got)
	}
}
