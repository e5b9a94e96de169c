package identity_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/identity"
	"github.com/switchyard/switchyard/server/internal/testenv"
)

// logBuffer collects JSON log lines; slog's handler serialises its writes.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// values returns the values of key over all records, with their levels.
func (b *logBuffer) values(t *testing.T, key string) (vals, levels []string) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for line := range strings.Lines(b.buf.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if v, ok := rec[key].(string); ok {
			vals = append(vals, v)
			levels = append(levels, rec["level"].(string))
		}
	}
	return vals, levels
}

func newService(t *testing.T) (*identity.Service, *pgxpool.Pool, *logBuffer) {
	t.Helper()
	pool := testenv.Pool(t)
	logs := &logBuffer{}
	return identity.New(pool, identity.Config{Logger: slog.New(slog.NewJSONHandler(logs, nil))}), pool, logs
}

// queryStrings runs a query returning one text column.
func queryStrings(t *testing.T, pool *pgxpool.Pool, sql string) []string {
	t.Helper()
	rows, err := pool.Query(t.Context(), sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return out
}

// snapshot renders every row that seeding may write, to compare runs.
func snapshot(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	var out []string
	for _, table := range []string{"workspace", "users", "projects", "environments", "sdk_keys"} {
		out = append(out, queryStrings(t, pool, "SELECT '"+table+": ' || to_jsonb(t)::text FROM "+table+" t ORDER BY 1")...)
	}
	return out
}

func TestSeedFirstBoot(t *testing.T) {
	t.Parallel()
	svc, pool, logs := newService(t)
	if err := svc.Seed(t.Context(), identity.SeedConfig{WorkspaceName: "Acme"}); err != nil {
		t.Fatalf("Seed: %v", err)
	}

	if diff := cmp.Diff([]string{"Acme"}, queryStrings(t, pool, "SELECT name FROM workspace")); diff != "" {
		t.Errorf("workspace (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Default default"},
		queryStrings(t, pool, "SELECT name || ' ' || slug FROM projects")); diff != "" {
		t.Errorf("projects (-want +got):\n%s", diff)
	}
	wantEnvs := []string{
		"Production production #ef4444 default=f approval=f",
		"Staging staging #f59e0b default=f approval=f",
		"Development development #22c55e default=t approval=f",
	}
	gotEnvs := queryStrings(t, pool, `SELECT format('%s %s %s default=%s approval=%s', e.name, e.slug, e.color, e.is_default, e.require_approval)
		FROM environments e JOIN projects p ON p.id = e.project_id WHERE p.slug = 'default' ORDER BY e.created_at`)
	if diff := cmp.Diff(wantEnvs, gotEnvs); diff != "" {
		t.Errorf("environments in creation order (-want +got):\n%s", diff)
	}
	gotKeys := queryStrings(t, pool, `SELECT format('%s env=%s project=%s', k.name, e.slug, p.slug)
		FROM sdk_keys k JOIN environments e ON e.id = k.environment_id JOIN projects p ON p.id = k.project_id`)
	if diff := cmp.Diff([]string{"Production SDK key env=production project=default"}, gotKeys); diff != "" {
		t.Errorf("SDK keys (-want +got):\n%s", diff)
	}
	if users := queryStrings(t, pool, "SELECT email FROM users"); len(users) != 0 {
		t.Errorf("users = %v, want none without ADMIN_EMAIL and ADMIN_PASSWORD", users)
	}

	// The full key is logged once at INFO, and it is the stored key.
	keys, levels := logs.values(t, "sdk_key")
	if len(keys) != 1 || levels[0] != "INFO" {
		t.Fatalf("logged sdk_key values %v at levels %v, want exactly one at INFO", keys, levels)
	}
	stored := queryStrings(t, pool, "SELECT prefix || ' ' || encode(key_hash, 'hex') FROM sdk_keys")
	want := []string{keys[0][:12] + " " + hex.EncodeToString(auth.HashCredential(keys[0]))}
	if !strings.HasPrefix(keys[0], auth.SDKKeyKind) {
		t.Errorf("logged key %q does not start with %s", keys[0], auth.SDKKeyKind)
	}
	if diff := cmp.Diff(want, stored); diff != "" {
		t.Errorf("stored prefix and hash do not match the logged key (-want +got):\n%s", diff)
	}
}

func TestSeedIsIdempotent(t *testing.T) {
	t.Parallel()
	svc, pool, logs := newService(t)
	cfg := identity.SeedConfig{AdminEmail: "admin@example.com", AdminPassword: "password1"}
	if err := svc.Seed(t.Context(), cfg); err != nil {
		t.Fatalf("first Seed: %v", err)
	}
	before := snapshot(t, pool)
	// A restart with changed settings still changes nothing.
	cfg = identity.SeedConfig{WorkspaceName: "Renamed", AdminEmail: "other@example.com", AdminPassword: "password2"}
	if err := svc.Seed(t.Context(), cfg); err != nil {
		t.Fatalf("second Seed: %v", err)
	}
	if diff := cmp.Diff(before, snapshot(t, pool)); diff != "" {
		t.Errorf("second Seed changed rows (-before +after):\n%s", diff)
	}
	if keys, _ := logs.values(t, "sdk_key"); len(keys) != 1 {
		t.Errorf("sdk_key logged %d times over two starts, want 1", len(keys))
	}
}

// TestSeedConcurrent starts two instances on one fresh database at once.
func TestSeedConcurrent(t *testing.T) {
	t.Parallel()
	pool := testenv.Pool(t)
	logs := &logBuffer{}
	cfg := identity.SeedConfig{AdminEmail: "admin@example.com", AdminPassword: "password1"}
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range errs {
		svc := identity.New(pool, identity.Config{Logger: slog.New(slog.NewJSONHandler(logs, nil))})
		wg.Go(func() { errs[i] = svc.Seed(t.Context(), cfg) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Seed on instance %d: %v", i, err)
		}
	}
	got := queryStrings(t, pool, `SELECT format('workspaces=%s projects=%s environments=%s keys=%s users=%s',
		(SELECT count(*) FROM workspace), (SELECT count(*) FROM projects), (SELECT count(*) FROM environments),
		(SELECT count(*) FROM sdk_keys), (SELECT count(*) FROM users))`)
	if diff := cmp.Diff([]string{"workspaces=1 projects=1 environments=3 keys=1 users=1"}, got); diff != "" {
		t.Errorf("rows after concurrent Seed (-want +got):\n%s", diff)
	}
	if keys, _ := logs.values(t, "sdk_key"); len(keys) != 1 {
		t.Errorf("sdk_key logged %d times, want 1", len(keys))
	}
}

func TestSeedAdmin(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		existing  bool // a user exists before Seed
		cfg       identity.SeedConfig
		wantUsers []string
		wantKind  apperr.Kind // when Seed must fail
	}{
		{
			name:      "both set creates the admin",
			cfg:       identity.SeedConfig{AdminEmail: "root@example.com", AdminPassword: "s3cret-pass", AdminName: "Root"},
			wantUsers: []string{"Root root@example.com admin"},
		},
		{
			name:      "name defaults to Admin",
			cfg:       identity.SeedConfig{AdminEmail: "root@example.com", AdminPassword: "s3cret-pass"},
			wantUsers: []string{"Admin root@example.com admin"},
		},
		{
			name:      "email only creates nobody",
			cfg:       identity.SeedConfig{AdminEmail: "root@example.com"},
			wantUsers: []string{},
		},
		{
			name:      "password only creates nobody",
			cfg:       identity.SeedConfig{AdminPassword: "s3cret-pass"},
			wantUsers: []string{},
		},
		{
			name:      "existing user keeps the admin out",
			existing:  true,
			cfg:       identity.SeedConfig{AdminEmail: "root@example.com", AdminPassword: "s3cret-pass"},
			wantUsers: []string{"Existing first@example.com viewer"},
		},
		{
			name:      "short password is refused",
			cfg:       identity.SeedConfig{AdminEmail: "root@example.com", AdminPassword: "short"},
			wantUsers: []string{},
			wantKind:  apperr.Invalid,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			svc, pool, _ := newService(t)
			if tt.existing {
				if _, err := pool.Exec(t.Context(), `INSERT INTO users (name, email, password_hash, role)
					VALUES ('Existing', 'first@example.com', 'x', 'viewer')`); err != nil {
					t.Fatalf("insert user: %v", err)
				}
			}
			err := svc.Seed(t.Context(), tt.cfg)
			if tt.wantKind != apperr.Internal {
				if apperr.KindOf(err) != tt.wantKind {
					t.Errorf("Seed error = %v (kind %v), want kind %v", err, apperr.KindOf(err), tt.wantKind)
				}
			} else if err != nil {
				t.Fatalf("Seed: %v", err)
			}
			got := queryStrings(t, pool, "SELECT name || ' ' || email || ' ' || role FROM users ORDER BY id")
			if diff := cmp.Diff(tt.wantUsers, got); diff != "" {
				t.Errorf("users (-want +got):\n%s", diff)
			}
			if len(tt.wantUsers) == 1 && !tt.existing {
				hashes := queryStrings(t, pool, "SELECT password_hash FROM users")
				if !auth.CheckPassword(hashes[0], tt.cfg.AdminPassword) {
					t.Errorf("stored hash %q does not verify ADMIN_PASSWORD", hashes[0])
				}
			}
		})
	}
}
