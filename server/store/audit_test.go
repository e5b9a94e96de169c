package store_test

import (
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/internal/testenv"
)

func insertAudit(t *testing.T, pool *pgxpool.Pool, envID uuid.UUID) {
	t.Helper()
	if _, err := pool.Exec(t.Context(), `INSERT INTO audit_entries (environment_id, flag_key, actor_email, action)
		VALUES ($1, 'flag', 'a@example.com', 'create')`, envID); err != nil {
		t.Fatalf("insert audit entry: %v", err)
	}
}

func countAudit(t *testing.T, pool *pgxpool.Pool) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(t.Context(), "SELECT count(*) FROM audit_entries").Scan(&n); err != nil {
		t.Fatalf("count audit entries: %v", err)
	}
	return n
}

func TestAuditEntriesAreAppendOnly(t *testing.T) {
	t.Parallel()
	for _, stmt := range []string{
		"UPDATE audit_entries SET action = 'update'",
		"DELETE FROM audit_entries",
	} {
		t.Run(stmt, func(t *testing.T) {
			t.Parallel()
			pool := testenv.Pool(t)
			_, env := fixture(t, pool)
			insertAudit(t, pool, env.ID)

			_, err := pool.Exec(t.Context(), stmt)
			var pgErr *pgconn.PgError
			if !errors.As(err, &pgErr) || pgErr.Code != "23001" {
				t.Errorf("%s: error %v, want SQLSTATE 23001 (restrict_violation)", stmt, err)
			}
			if got := countAudit(t, pool); got != 1 {
				t.Errorf("audit entries after refused %s = %d, want 1", stmt, got)
			}
		})
	}
}

func TestAuditEntriesCascade(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		delete string // deletes the fixture's project or environment, $1 = its id
		byEnv  bool
	}{
		{name: "environment delete", delete: "DELETE FROM environments WHERE id = $1", byEnv: true},
		{name: "project delete", delete: "DELETE FROM projects WHERE id = $1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pool := testenv.Pool(t)
			project, env := fixture(t, pool)
			// A second project's entries must survive the cascade.
			q := db.New(pool)
			other, err := q.CreateProject(t.Context(), db.CreateProjectParams{Name: "Other", Slug: "other"})
			if err != nil {
				t.Fatalf("create project: %v", err)
			}
			otherEnv, err := q.CreateEnvironment(t.Context(), db.CreateEnvironmentParams{
				ProjectID: other.ID, Name: "Production", Slug: "production", Color: "#ef4444", IsDefault: true,
			})
			if err != nil {
				t.Fatalf("create environment: %v", err)
			}
			insertAudit(t, pool, env.ID)
			insertAudit(t, pool, env.ID)
			insertAudit(t, pool, otherEnv.ID)

			id := project.ID
			if tt.byEnv {
				id = env.ID
			}
			if _, err := pool.Exec(t.Context(), tt.delete, id); err != nil {
				t.Fatalf("cascading delete refused: %v", err)
			}
			if got := countAudit(t, pool); got != 1 {
				t.Errorf("audit entries after %s = %d, want 1 (the other project's)", tt.name, got)
			}
		})
	}
}
