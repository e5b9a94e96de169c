// Package testenv gives tests real services: a fresh, migrated PostgreSQL
// database per test and the Redis URL. The admin connection comes from
// TEST_DATABASE_URL (a postgres:// URL) and Redis from TEST_REDIS_URL. Without
// them tests skip, except under CI=true, where they fail
// (docs/reference/code-style.md, §10 Testing).
//
// The databases it makes on the shared server are named so that leftovers can
// be told from databases in use:
//
//	switchyard_tmpl_<hash>            the migrated template of one set of migration files
//	switchyard_tmpl_<hash>_building   that template while it is built, or after a killed build
//	switchyard_test_<owner>_<random>  one test's clone; owner identifies its test process
//
// A test process marks what it uses with session-level advisory locks, held
// on connections it keeps open until it exits, so PostgreSQL releases them
// however the process ends (kill -9, or a -timeout panic that skips every
// cleanup): a shared lock (templateUseLock, key of the name) on each template
// it clones from or builds, and a shared lock (cloneOwnerLock, owner) that
// covers its clones. Whoever takes the exclusive lock knows that no live
// process uses the database, and only then drops it. A new template drops the
// templates of other hashes so marked unused, and each process drops, once,
// the clones of processes that ended without dropping them.
package testenv

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/migrations"
	"github.com/switchyard/switchyard/server/store"
)

// templateLockKey is the advisory lock, taken on the admin database, that
// serialises template creation across test binaries starting at once.
const templateLockKey int64 = 7292140635512040287

// The classes of the two-key advisory locks that mark databases in use (see
// the package comment). Two-key locks live apart from templateLockKey's
// one-key space.
const (
	templateUseLock int32 = 0x5359_0001 // key: templateKey(template name)
	cloneOwnerLock  int32 = 0x5359_0002 // key: the owning process's id
)

// templateFamily prefixes every template's name; the hash of the migrations
// follows.
const templateFamily = "switchyard_tmpl_"

// clonePrefix prefixes every per-test clone's name; the owner and a random
// part follow.
const clonePrefix = "switchyard_test_"

// lockTimeout bounds connecting for and waiting on an advisory lock; a
// holder of the exclusive lock holds it only for a DROP DATABASE.
const lockTimeout = 60 * time.Second

// cloneName matches the clones made by createDatabase; group 1 is the owner.
var cloneName = regexp.MustCompile("^" + clonePrefix + "([0-9a-f]{8})_[a-z2-7]+$")

// Per-process state. A test process is the unit that holds and releases the
// locks, so this state is the process's, not a test's.
var (
	// processOwner is this process's owner id, in the names of its clones.
	processOwner = sync.OnceValue(func() uint32 {
		var b [4]byte
		_, _ = rand.Read(b[:]) // never fails (crypto/rand)
		return binary.BigEndian.Uint32(b[:])
	})
	// held maps a lock to a sync.OnceValues that takes it once and returns
	// its connection; keeping the function keeps the connection reachable
	// (an unreachable one would be closed by the garbage collector, and its
	// locks released).
	held sync.Map
	// orphanSweep drops the clones of ended processes once per process.
	orphanSweep sync.Once
)

// DatabaseURL creates a fresh database cloned from the migrated template of the
// current migrations, drops it when the test ends, and returns its URL.
func DatabaseURL(t testing.TB) string {
	t.Helper()
	admin := adminURL(t)
	hash, err := migrationsHash()
	if err == nil {
		err = ensureTemplate(t.Context(), admin, templateFamily, hash, t.Logf)
	}
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	return createDatabase(t, admin, templateFamily+hash)
}

// EmptyDatabaseURL is DatabaseURL for a database without any schema, for tests
// of the migrations themselves.
func EmptyDatabaseURL(t testing.TB) string {
	t.Helper()
	return createDatabase(t, adminURL(t), "template0")
}

// Pool returns a pool on a fresh database from DatabaseURL, opened the way the
// server opens its own (store.Open), closed when the test ends.
func Pool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	pool, err := store.Open(t.Context(), DatabaseURL(t), 0)
	if err != nil {
		t.Fatalf("testenv: connect: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// RedisURL returns TEST_REDIS_URL under the same skip-or-fail rule.
func RedisURL(t testing.TB) string {
	t.Helper()
	return lookup(t, "TEST_REDIS_URL")
}

// lookup returns the environment variable name, or skips the test when it is
// unset; under CI=true it fails instead, so CI never passes by skipping.
func lookup(t testing.TB, name string) string {
	t.Helper()
	if v := os.Getenv(name); v != "" {
		return v
	}
	msg := "testenv: " + name + " is not set; set it to test against the real service, e.g. " +
		"TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable " +
		"TEST_REDIS_URL=redis://127.0.0.1:6379/0"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

func adminURL(t testing.TB) *url.URL {
	t.Helper()
	u, err := url.Parse(lookup(t, "TEST_DATABASE_URL"))
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Fatalf("testenv: TEST_DATABASE_URL must be a postgres:// URL (err: %v)", err)
	}
	return u
}

// withDatabase returns u pointing at database name instead.
func withDatabase(u *url.URL, name string) string {
	c := *u
	c.Path = "/" + name
	return c.String()
}

// migrationsHash hashes the migration files; the template is named after
// it, so changed migrations get a new template.
func migrationsHash() (string, error) {
	h := sha256.New()
	err := fs.WalkDir(migrations.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(migrations.FS, path)
		fmt.Fprintf(h, "%s\x00%d\x00%s", path, len(b), b)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("hash migrations: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// ensureTemplate creates the migrated template database family+hash unless
// it exists, and marks it in use by this process first, so that no other
// process drops it while this one clones it. Under the advisory lock it
// builds the database under a temporary name and renames it when complete, so
// a template that exists is always fully migrated, even when a test binary
// was killed halfway. After creating one it drops the family's templates of
// other hashes that no live process uses (failures to drop go to logf: they
// cost disk, not correctness).
func ensureTemplate(ctx context.Context, admin *url.URL, family, hash string, logf func(string, ...any)) error {
	name := family + hash
	if err := holdShared(admin, templateUseLock, templateKey(name)); err != nil {
		return fmt.Errorf("mark template %s in use: %w", name, err)
	}
	conn, err := pgx.Connect(ctx, admin.String())
	if err != nil {
		return fmt.Errorf("connect admin database: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx)) // also releases the session lock
	exists := func() (ok bool, err error) {
		err = conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&ok)
		return ok, err
	}
	if ok, err := exists(); err != nil || ok {
		return err
	}
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", templateLockKey); err != nil {
		return fmt.Errorf("lock template creation: %w", err)
	}
	if ok, err := exists(); err != nil || ok {
		return err
	}
	building := name + "_building"
	for _, sql := range []string{
		"DROP DATABASE IF EXISTS " + pgx.Identifier{building}.Sanitize() + " WITH (FORCE)",
		"CREATE DATABASE " + pgx.Identifier{building}.Sanitize() + " TEMPLATE template0",
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			return fmt.Errorf("create template: %w", err)
		}
	}
	pool, err := store.Open(ctx, withDatabase(admin, building), 2)
	if err != nil {
		return fmt.Errorf("create template: %w", err)
	}
	err = store.Migrate(ctx, pool, slog.New(slog.DiscardHandler))
	pool.Close() // nothing may stay connected to a database that is renamed or cloned
	if err != nil {
		return fmt.Errorf("create template: %w", err)
	}
	_, err = conn.Exec(ctx, "ALTER DATABASE "+pgx.Identifier{building}.Sanitize()+" RENAME TO "+pgx.Identifier{name}.Sanitize())
	if err != nil {
		return fmt.Errorf("publish template: %w", err)
	}
	if err := dropStaleTemplates(ctx, conn, family, name); err != nil {
		logf("testenv: drop templates of other migrations: %v", err)
	}
	return nil
}

// dropStaleTemplates drops the templates of family other than current, and
// their leftover _building databases, that no live process marks in use. A
// concurrent test process of another commit keeps its template.
func dropStaleTemplates(ctx context.Context, conn *pgx.Conn, family, current string) error {
	stale := regexp.MustCompile("^(" + regexp.QuoteMeta(family) + "[0-9a-f]{16})(_building)?$")
	names, err := databasesWithPrefix(ctx, conn, family)
	if err != nil {
		return err
	}
	var errs []error
	for _, db := range names {
		m := stale.FindStringSubmatch(db)
		if m == nil || m[1] == current {
			continue
		}
		if err := dropUnlocked(ctx, conn, templateUseLock, templateKey(m[1]), db); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// dropOrphanClones drops the clones whose owning process has ended without
// dropping them: killed, or stopped by a -timeout panic, which skips the
// cleanups. Clones of live processes, this one's included, stay.
func dropOrphanClones(ctx context.Context, admin *url.URL) error {
	conn, err := pgx.Connect(ctx, admin.String())
	if err != nil {
		return fmt.Errorf("connect admin database: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	names, err := databasesWithPrefix(ctx, conn, clonePrefix)
	if err != nil {
		return err
	}
	var errs []error
	for _, db := range names {
		m := cloneName.FindStringSubmatch(db)
		if m == nil {
			continue // not ours to judge, e.g. made by an older testenv
		}
		var owner uint32
		if _, err := fmt.Sscanf(m[1], "%08x", &owner); err != nil {
			continue
		}
		if err := dropUnlocked(ctx, conn, cloneOwnerLock, int32(owner), db); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// databasesWithPrefix lists the databases whose names start with prefix.
func databasesWithPrefix(ctx context.Context, conn *pgx.Conn, prefix string) ([]string, error) {
	rows, err := conn.Query(ctx, "SELECT datname FROM pg_database WHERE starts_with(datname, $1) ORDER BY datname", prefix)
	if err != nil {
		return nil, fmt.Errorf("list databases: %w", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("list databases: %w", err)
	}
	return names, nil
}

// dropUnlocked drops db if it can take the exclusive advisory lock (class,
// key), that is, if no live process holds the shared lock that marks db in
// use, and holds the lock while it drops, so no process starts using db
// meanwhile. A db in use is left alone.
func dropUnlocked(ctx context.Context, conn *pgx.Conn, class, key int32, db string) error {
	var free bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1, $2)", class, key).Scan(&free); err != nil {
		return fmt.Errorf("lock %s: %w", db, err)
	}
	if !free {
		return nil
	}
	_, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{db}.Sanitize()+" WITH (FORCE)")
	if _, uerr := conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1, $2)", class, key); uerr != nil && err == nil {
		err = uerr
	}
	if err != nil {
		return fmt.Errorf("drop %s: %w", db, err)
	}
	return nil
}

// holdShared takes the shared advisory lock (class, key) on admin's server,
// once per process, on a connection of its own that stays open, and so keeps
// the lock, until the process exits.
func holdShared(admin *url.URL, class, key int32) error {
	id := fmt.Sprintf("%s\x00%d\x00%d", admin, class, key)
	f, _ := held.LoadOrStore(id, sync.OnceValues(func() (*pgx.Conn, error) {
		// Not a test's context: the lock outlives every test.
		ctx, cancel := context.WithTimeout(context.Background(), lockTimeout)
		defer cancel()
		conn, err := pgx.Connect(ctx, admin.String())
		if err != nil {
			return nil, fmt.Errorf("connect admin database: %w", err)
		}
		if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock_shared($1, $2)", class, key); err != nil {
			_ = conn.Close(context.Background())
			return nil, fmt.Errorf("take advisory lock: %w", err)
		}
		return conn, nil
	}))
	_, err := f.(func() (*pgx.Conn, error))()
	return err
}

// templateKey is the use lock's key for a template name. Two names that
// share a key only keep each other from being dropped.
func templateKey(name string) int32 {
	h := fnv.New32a()
	h.Write([]byte(name))
	return int32(h.Sum32())
}

// createDatabase clones template into a new randomly named database, drops it
// (forcibly, whatever is still connected) when the test ends, and returns its URL.
func createDatabase(t testing.TB, admin *url.URL, template string) string {
	t.Helper()
	owner := processOwner()
	if err := holdShared(admin, cloneOwnerLock, int32(owner)); err != nil {
		t.Fatalf("testenv: mark this process's clones in use: %v", err)
	}
	orphanSweep.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), lockTimeout)
		defer cancel()
		if err := dropOrphanClones(ctx, admin); err != nil {
			t.Logf("testenv: drop clones of ended test processes: %v", err)
		}
	})
	name := fmt.Sprintf("%s%08x_%s", clonePrefix, owner, strings.ToLower(rand.Text()))
	exec := func(ctx context.Context, sql string) error {
		conn, err := pgx.Connect(ctx, admin.String())
		if err != nil {
			return err
		}
		defer conn.Close(context.WithoutCancel(ctx))
		_, err = conn.Exec(ctx, sql)
		return err
	}
	if err := exec(t.Context(), "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+
		" TEMPLATE "+pgx.Identifier{template}.Sanitize()); err != nil {
		t.Fatalf("testenv: create database: %v", err)
	}
	t.Cleanup(func() {
		// t.Context is already cancelled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Errorf("testenv: drop database %s: %v", name, err)
		}
	})
	return withDatabase(admin, name)
}
