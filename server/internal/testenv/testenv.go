// Package testenv gives tests real services: a fresh, migrated PostgreSQL
// database per test and the Redis URL. The admin connection comes from
// TEST_DATABASE_URL (a postgres:// URL) and Redis from TEST_REDIS_URL. Without
// them tests skip, except under CI=true, where they fail (STYLE §10).
package testenv

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"strings"
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

// DatabaseURL creates a fresh database cloned from the migrated template of the
// current migrations, drops it when the test ends, and returns its URL.
func DatabaseURL(t testing.TB) string {
	t.Helper()
	admin := adminURL(t)
	name, err := templateName()
	if err == nil {
		err = ensureTemplate(t.Context(), admin, name)
	}
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	return createDatabase(t, admin, name)
}

// EmptyDatabaseURL is DatabaseURL for a database without any schema, for tests
// of the migrations themselves.
func EmptyDatabaseURL(t testing.TB) string {
	t.Helper()
	return createDatabase(t, adminURL(t), "template0")
}

// Pool returns a pool on a fresh database from DatabaseURL, closed when the test ends.
func Pool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(t.Context(), DatabaseURL(t))
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

// templateName names the template after a hash of the migration files, so
// changed migrations get a new template.
func templateName() (string, error) {
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
	return "switchyard_tmpl_" + hex.EncodeToString(h.Sum(nil))[:16], nil
}

// ensureTemplate creates the migrated template database name unless it
// exists. Under the advisory lock it builds the database under a temporary
// name and renames it when complete, so a template that exists is always
// fully migrated, even when a test binary was killed halfway.
func ensureTemplate(ctx context.Context, admin *url.URL, name string) error {
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
	return nil
}

// createDatabase clones template into a new randomly named database, drops it
// (forcibly, whatever is still connected) when the test ends, and returns its URL.
func createDatabase(t testing.TB, admin *url.URL, template string) string {
	t.Helper()
	name := "switchyard_test_" + strings.ToLower(rand.Text())
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
