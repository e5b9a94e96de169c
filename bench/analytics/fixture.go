package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/server/auth"
)

// fixture is what the tool arranges in the fresh database: an admin's
// personal access token and a server SDK key per environment.
type fixture struct {
	pool   *pgxpool.Pool
	dbName string
	base   string // http://host:port
	token  string
	envs   map[string]uuid.UUID
	keys   map[string]string // environment slug -> SDK key
	http   *http.Client
}

// arrange creates, directly in SQL as server/internal/apptest does, a
// workspace admin with a token and a server SDK key for each environment of
// the default project (the server created them at start-up).
func arrange(ctx context.Context, dbURL, dbName, base string) (*fixture, error) {
	cfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = 16 // the raw baseline's writers plus the transaction holding the folders off
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	fx := &fixture{pool: pool, dbName: dbName, base: base, envs: map[string]uuid.UUID{}, keys: map[string]string{},
		http: &http.Client{Timeout: 5 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	hash, err := auth.HashPassword("bench-password-123")
	if err != nil {
		return nil, err
	}
	var userID int64
	if err := pool.QueryRow(ctx,
		`INSERT INTO users (name, email, password_hash, role) VALUES ('bench', $2, $1, 'admin') RETURNING id`,
		hash, fmt.Sprintf("bench-%d@example.com", time.Now().UnixNano())).Scan(&userID); err != nil {
		return nil, fmt.Errorf("create user: %w", err)
	}
	full, prefix, th, err := auth.NewCredential(auth.TokenKind)
	if err != nil {
		return nil, err
	}
	if _, err := pool.Exec(ctx,
		`INSERT INTO personal_access_tokens (user_id, name, token_hash, prefix, scope) VALUES ($1, 'bench', $2, $3, 'read_write')`,
		userID, th, prefix); err != nil {
		return nil, fmt.Errorf("create token: %w", err)
	}
	fx.token = full
	rows, err := pool.Query(ctx, `SELECT e.slug, e.id FROM projects p JOIN environments e ON e.project_id = p.id WHERE p.slug = 'default'`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var slug string
		var id uuid.UUID
		if err := rows.Scan(&slug, &id); err != nil {
			return nil, err
		}
		fx.envs[slug] = id
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, slug := range []string{"production", "staging", "development"} {
		env, ok := fx.envs[slug]
		if !ok {
			return nil, fmt.Errorf("environment %s of the default project not found (%v)", slug, fx.envs)
		}
		full, prefix, kh, err := auth.NewCredential(auth.SDKKeyKind)
		if err != nil {
			return nil, err
		}
		if _, err := pool.Exec(ctx,
			`INSERT INTO sdk_keys (project_id, environment_id, name, key_hash, prefix)
			 SELECT project_id, id, 'bench', $2, $3 FROM environments WHERE id = $1`, env, kh, prefix); err != nil {
			return nil, fmt.Errorf("create sdk key: %w", err)
		}
		fx.keys[slug] = full
	}
	return fx, nil
}

// call sends method path with credential cred, the JSON of body (raw
// bytes as they are), and decodes a JSON answer into out. It fails on any
// status but want.
func (fx *fixture) call(ctx context.Context, cred, method, path string, body any, want int, out any) error {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, fx.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+cred)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := fx.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("%s %s: decode: %w", method, path, err)
		}
	}
	return nil
}

// attach returns the fixture for a copy of the database it was arranged in
// (the same token, keys and environments), served by the server at base.
func (fx *fixture) attach(ctx context.Context, d database, base string) (*fixture, error) {
	cfg, err := pgxpool.ParseConfig(d.url)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = 16
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	c := *fx
	c.pool, c.dbName, c.base = pool, d.name, base
	return &c, nil
}

func (fx *fixture) envPath(slug string) string { return "/api/environments/" + fx.envs[slug].String() }

// tableWrites are n_tup_ins + n_tup_upd (and n_tup_del, reported apart) of
// every user table of the scratch database.
type tableWrites map[string][3]int64 // table -> inserted, updated, deleted

func (w tableWrites) rows() int64 {
	var n int64
	for _, v := range w {
		n += v[0] + v[1]
	}
	return n
}

// minus is w - before, per table, leaving out tables that did not change.
func (w tableWrites) minus(before tableWrites) tableWrites {
	out := tableWrites{}
	for t, v := range w {
		b := before[t]
		d := [3]int64{v[0] - b[0], v[1] - b[1], v[2] - b[2]}
		if d != [3]int64{} {
			out[t] = d
		}
	}
	return out
}

func (w tableWrites) tables() []string {
	var ts []string
	for t := range w {
		ts = append(ts, t)
	}
	sort.Slice(ts, func(i, j int) bool {
		a, b := w[ts[i]], w[ts[j]]
		if a[0]+a[1] != b[0]+b[1] {
			return a[0]+a[1] > b[0]+b[1]
		}
		return ts[i] < ts[j]
	})
	return ts
}

func (fx *fixture) readWrites(ctx context.Context) (tableWrites, error) {
	conn, err := fx.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Release()
	// This backend's own counts first (it reads the watermarks), and a
	// fresh snapshot of the shared statistics.
	_, _ = conn.Exec(ctx, "SELECT pg_stat_force_next_flush()")
	_, _ = conn.Exec(ctx, "SELECT pg_stat_clear_snapshot()")
	rows, err := conn.Query(ctx, `SELECT relname, n_tup_ins, n_tup_upd, n_tup_del FROM pg_stat_user_tables`)
	if err != nil {
		return nil, fmt.Errorf("pg_stat_user_tables: %w", err)
	}
	out := tableWrites{}
	for rows.Next() {
		var name string
		var v [3]int64
		if err := rows.Scan(&name, &v[0], &v[1], &v[2]); err != nil {
			return nil, err
		}
		out[name] = v
	}
	return out, rows.Err()
}

// settledWrites reads the table statistics once every backend has flushed
// what it did before now. PostgreSQL 15 backends flush their counts when
// they go idle, at most once a second, and an idle backend with counts
// pending flushes them within 10 s (PGSTAT_IDLE_INTERVAL); the server's
// pooled connections cannot be asked to flush, so this waits those 11 s
// after quiet began and then until two reads a second apart agree.
func (fx *fixture) settledWrites(ctx context.Context, quietSince time.Time) (tableWrites, error) {
	if d := time.Until(quietSince.Add(11 * time.Second)); d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	prev, err := fx.readWrites(ctx)
	if err != nil {
		return nil, err
	}
	for range 30 {
		time.Sleep(time.Second)
		cur, err := fx.readWrites(ctx)
		if err != nil {
			return nil, err
		}
		if len(cur.minus(prev)) == 0 {
			return cur, nil
		}
		prev = cur
	}
	return prev, fmt.Errorf("table statistics still moving after 30 s")
}

// waitFolded waits until every raw row is in the rollups (the watermarks
// of rollup_watermarks have reached the largest ids), so that the rows the
// fold writes are counted and the reads that follow find no backlog. It
// returns how long it waited. When the schema no longer has these tables it
// returns at once.
func (fx *fixture) waitFolded(ctx context.Context, timeout time.Duration) (time.Duration, error) {
	start := time.Now()
	for {
		a, b, c, err := fx.backlog(ctx)
		if err != nil {
			fmt.Fprintf(os.Stderr, "warning: cannot read the fold's watermarks (%v); not waiting for the backlog\n", err)
			return time.Since(start), nil
		}
		if a <= 0 && b <= 0 && c <= 0 {
			return time.Since(start), nil
		}
		if time.Since(start) > timeout {
			return time.Since(start), fmt.Errorf("backlog not folded after %s: %d impressions, %d events, %d summaries", timeout, a, b, c)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// backlog is the number of raw impressions, goal events and summaries
// not yet folded: ids above their watermarks.
func (fx *fixture) backlog(ctx context.Context) (imps, events, sums int64, err error) {
	const q = `SELECT
	  (SELECT coalesce(max(id), 0) FROM impressions) - (SELECT folded_through FROM rollup_watermarks WHERE kind = 'impressions'),
	  (SELECT coalesce(max(id), 0) FROM goal_events) - (SELECT folded_through FROM rollup_watermarks WHERE kind = 'events'),
	  (SELECT coalesce(max(id), 0) FROM impression_summaries) - coalesce((SELECT folded_through FROM rollup_watermarks WHERE kind = 'summaries'), 0)`
	err = fx.pool.QueryRow(ctx, q).Scan(&imps, &events, &sums)
	return imps, events, sums, err
}
