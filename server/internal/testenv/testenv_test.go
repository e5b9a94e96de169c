package testenv

import (
	"context"
	"crypto/rand"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestDatabaseURLIsFreshAndMigrated(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	a, b := Pool(t), Pool(t)
	if _, err := a.Exec(ctx, "INSERT INTO workspace (id, name) VALUES (1, 'A')"); err != nil {
		t.Fatalf("insert into first database: %v", err)
	}
	var n int
	if err := b.QueryRow(ctx, "SELECT count(*) FROM workspace").Scan(&n); err != nil {
		t.Fatalf("query second database: %v", err)
	}
	if n != 0 {
		t.Errorf("second database sees %d workspace rows, want 0: databases are not isolated", n)
	}
}

// TestEnsureTemplateConcurrent builds one new template from several goroutines
// at once, each on its own admin connection, as separate test binaries would.
func TestEnsureTemplateConcurrent(t *testing.T) {
	t.Parallel()
	admin := adminURL(t)
	name := "switchyard_tmpl_race_" + strings.ToLower(rand.Text())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, admin.String())
		if err != nil {
			t.Errorf("connect: %v", err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Errorf("drop template: %v", err)
		}
	})

	const workers = 4
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() { errs[i] = ensureTemplate(t.Context(), admin, name) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("worker %d: %v", i, err)
		}
	}
	url := createDatabase(t, admin, name)
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatalf("connect to clone: %v", err)
	}
	defer conn.Close(context.WithoutCancel(t.Context()))
	var version int64
	if err := conn.QueryRow(t.Context(), "SELECT max(version_id) FROM goose_db_version").Scan(&version); err != nil {
		t.Fatalf("read migration version of clone: %v", err)
	}
	if version < 1 {
		t.Errorf("clone of template is at migration version %d, want >= 1", version)
	}
}
