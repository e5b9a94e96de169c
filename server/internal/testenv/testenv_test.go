package testenv

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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
	family := testFamily("race")
	const hash = "0123456789abcdef"
	name := family + hash
	dropAfter(t, admin, name)

	const workers = 4
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() { errs[i] = ensureTemplate(t.Context(), admin, family, hash, t.Logf) })
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

// testFamily is a template family of the test's own, so that its templates
// and the real ones (switchyard_tmpl_<hash>) never drop each other.
func testFamily(what string) string {
	return "switchyard_tmpl_" + what + "_" + strings.ToLower(rand.Text()[:8]) + "_"
}

// dropAfter drops the databases when the test ends, if they still exist.
func dropAfter(t *testing.T, admin *url.URL, names ...string) {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, name := range names {
			if err := adminExec(ctx, admin, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
				t.Errorf("drop %s: %v", name, err)
			}
		}
	})
}

func adminExec(ctx context.Context, admin *url.URL, sql string, args ...any) error {
	conn, err := pgx.Connect(ctx, admin.String())
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, sql, args...)
	return err
}

// databases lists the databases whose names start with prefix.
func databases(t *testing.T, admin *url.URL, prefix string) []string {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), admin.String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.WithoutCancel(t.Context()))
	names, err := databasesWithPrefix(t.Context(), conn, prefix)
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// holdElsewhere takes the shared lock (class, key) on a connection of its
// own, as another live test process would; release ends that process.
func holdElsewhere(t *testing.T, admin *url.URL, class, key int32) (release func()) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), admin.String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(t.Context(), "SELECT pg_advisory_lock_shared($1, $2)", class, key); err != nil {
		t.Fatal(err)
	}
	release = func() { _ = conn.Close(context.Background()) }
	t.Cleanup(release)
	return release
}

// Migrations change: the new template drops the templates of other hashes
// and builds a killed run left behind, but keeps the one another live test
// process (say, of another commit) is cloning from, until that process ends.
func TestNewTemplateDropsStaleTemplates(t *testing.T) {
	t.Parallel()
	admin := adminURL(t)
	family := testFamily("stale")
	stale := family + "0000000000000000"                // nobody uses it
	killedBuild := family + "1111111111111111_building" // a build killed halfway
	otherCommit := family + "2222222222222222"          // in use by a concurrent process
	current, next := "3333333333333333", "4444444444444444"
	dropAfter(t, admin, stale, killedBuild, otherCommit, family+current, family+next)
	for _, name := range []string{stale, killedBuild, otherCommit} {
		if err := adminExec(t.Context(), admin, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" TEMPLATE template0"); err != nil {
			t.Fatal(err)
		}
	}
	endOtherProcess := holdElsewhere(t, admin, templateUseLock, templateKey(otherCommit))

	if err := ensureTemplate(t.Context(), admin, family, current, t.Logf); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{otherCommit, family + current}, databases(t, admin, family)); diff != "" {
		t.Errorf("after a new template (-want +got):\n%s", diff)
	}

	// The other process ends; the next new template drops its template but
	// not the one this process still uses.
	endOtherProcess()
	if err := ensureTemplate(t.Context(), admin, family, next, t.Logf); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{family + current, family + next}, databases(t, admin, family)); diff != "" {
		t.Errorf("after the next new template (-want +got):\n%s", diff)
	}
}

// A test process killed mid-run (or stopped by -timeout, which skips the
// cleanups) leaves its clones behind; the next process drops them, and only
// them.
func TestOrphanClonesAreDropped(t *testing.T) {
	t.Parallel()
	admin := adminURL(t)
	mine := createDatabase(t, admin, "template0")
	mineName := strings.TrimPrefix(mustParse(t, mine).Path, "/")
	ownerOf := func(owner uint32) string {
		return fmt.Sprintf("%s%08x_%s", clonePrefix, owner, strings.ToLower(rand.Text()))
	}
	liveOwner, deadOwner := randomOwner(), randomOwner()
	live, dead := ownerOf(liveOwner), ownerOf(deadOwner)
	dropAfter(t, admin, live, dead)
	for _, name := range []string{live, dead} {
		if err := adminExec(t.Context(), admin, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" TEMPLATE template0"); err != nil {
			t.Fatal(err)
		}
	}
	holdElsewhere(t, admin, cloneOwnerLock, int32(liveOwner))

	if err := dropOrphanClones(t.Context(), admin); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, name := range databases(t, admin, clonePrefix) {
		got[name] = true
	}
	if !got[mineName] || !got[live] || got[dead] {
		t.Errorf("after the sweep: this process's clone kept %v, a live process's kept %v, a dead process's kept %v; want true, true, false",
			got[mineName], got[live], got[dead])
	}
}

func randomOwner() uint32 {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return binary.BigEndian.Uint32(b[:])
}

func mustParse(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
