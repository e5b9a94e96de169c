package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/server/auth"
)

// scratchDatabase creates a fresh database next to adminURL's and returns
// its URL, its name and a function that drops it.
func scratchDatabase(ctx context.Context, adminURL string, keep bool) (string, string, func(), error) {
	admin, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return "", "", nil, fmt.Errorf("connect %s: %w", adminURL, err)
	}
	name := fmt.Sprintf("switchyard_export_%d", time.Now().UnixNano()/1e6)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		admin.Close(ctx)
		return "", "", nil, fmt.Errorf("create database: %w", err)
	}
	u, err := url.Parse(adminURL)
	if err != nil {
		return "", "", nil, err
	}
	u.Path = "/" + name
	return u.String(), name, func() {
		ctx := context.Background()
		defer admin.Close(ctx)
		if keep {
			fmt.Printf("kept database %s\n", name)
			return
		}
		if _, err := admin.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			fmt.Fprintf(os.Stderr, "drop %s: %v\n", name, err)
		}
	}, nil
}

// fixture is what the tool arranges in the fresh database: an admin's
// personal access token and the default project's environments.
type fixture struct {
	pool   *pgxpool.Pool
	dbName string
	base   string // http://host:port, once the measured server runs
	token  string
	envs   map[string]uuid.UUID
}

// arrange creates, directly in SQL as server/internal/apptest does, a
// workspace admin with a personal access token, and reads the default
// project's environments (the server created them at its first start).
func arrange(ctx context.Context, dbURL, dbName string) (*fixture, error) {
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	fx := &fixture{pool: pool, dbName: dbName, envs: map[string]uuid.UUID{}}
	hash, err := auth.HashPassword("bench-password-123")
	if err != nil {
		return nil, err
	}
	var userID int64
	if err := pool.QueryRow(ctx,
		`INSERT INTO users (name, email, password_hash, role) VALUES ('bench', 'bench@example.com', $1, 'admin') RETURNING id`,
		hash).Scan(&userID); err != nil {
		return nil, fmt.Errorf("create user: %w", err)
	}
	full, prefix, th, err := auth.NewCredential(auth.TokenKind)
	if err != nil {
		return nil, err
	}
	if _, err := pool.Exec(ctx,
		`INSERT INTO personal_access_tokens (user_id, name, token_hash, prefix, scope) VALUES ($1, 'bench', $2, $3, 'read_only')`,
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
	for _, slug := range []string{"production", "staging"} {
		if _, ok := fx.envs[slug]; !ok {
			return nil, fmt.Errorf("environment %s of the default project not found (%v)", slug, fx.envs)
		}
	}
	return fx, nil
}

// seeded is what seed wrote: the exported environment's rows, the other
// environment's, and a range that holds every one of the former.
type seeded struct {
	rows, other, indexes int
	from, to             time.Time
	copyTime, vacuumTime time.Duration
	tableSize            string
}

// contexts are the evaluation contexts the seed cycles through: small
// objects of the kind SDKs send, about 80 bytes each.
var contexts = []json.RawMessage{
	json.RawMessage(`{"plan": "pro", "country": "DE", "app_version": "4.2.1", "beta": false}`),
	json.RawMessage(`{"plan": "free", "country": "US", "app_version": "4.1.0", "beta": true}`),
	json.RawMessage(`{"plan": "team", "country": "FR", "app_version": "4.2.1", "seats": 12}`),
	nil, // no context
}

// impressionSource generates the seed's rows for COPY: o.rows impressions
// of production over the last 30 days in id order (each a few seconds off
// its neighbours, as reports arrive), with one of staging after every
// o.otherEvery.
type impressionSource struct {
	prod, other uuid.UUID
	n, every    int
	i, emitted  int
	start       time.Time
	step        time.Duration
	row         []any
	prodRows    int
}

func (s *impressionSource) Next() bool {
	if s.prodRows >= s.n {
		return false
	}
	s.i++
	env := s.prod
	if s.every > 0 && s.i%(s.every+1) == 0 {
		env = s.other
	} else {
		s.prodRows++
	}
	k := s.prodRows
	user := fmt.Sprintf("user-%d", (k*7919)%200_000)
	flag := fmt.Sprintf("flag-%02d", k%20)
	value := "true"
	switch {
	case k%3 == 0:
		value = "false"
	case k%20 == 7:
		value = "variant-b"
	}
	var userID *string
	if k%50 != 0 { // one evaluation in 50 is anonymous
		userID = &user
	}
	at := s.start.Add(time.Duration(k)*s.step + time.Duration(k%13-6)*time.Second)
	s.row = []any{env, flag, userID, value, contexts[k%len(contexts)], at}
	return true
}

func (s *impressionSource) Values() ([]any, error) { return s.row, nil }
func (s *impressionSource) Err() error             { return nil }

// seed copies the impressions in, moves the fold's watermark past them
// (the export reads no rollups; folding them first would take longer than
// the measurements), and vacuums and analyzes the table as autovacuum would
// have by the time anyone exports it. The table's secondary indexes are
// dropped for the COPY and built again after it, from their own
// definitions: the same indexes, built in a fraction of the time.
func seed(ctx context.Context, fx *fixture, o options) (seeded, error) {
	now := time.Now().UTC().Truncate(time.Second)
	span := 30 * 24 * time.Hour
	src := &impressionSource{prod: fx.envs["production"], other: fx.envs["staging"], n: o.rows, every: o.otherEvery,
		start: now.Add(-span), step: span / time.Duration(o.rows)}
	t0 := time.Now()
	var defs []string
	rows, err := fx.pool.Query(ctx, `SELECT indexname, indexdef FROM pg_indexes
		WHERE schemaname = 'public' AND tablename = 'impressions'
		  AND indexname NOT IN (SELECT conname FROM pg_constraint WHERE conrelid = 'impressions'::regclass)`)
	if err != nil {
		return seeded{}, err
	}
	var names []string
	for rows.Next() {
		var name, def string
		if err := rows.Scan(&name, &def); err != nil {
			return seeded{}, err
		}
		names, defs = append(names, name), append(defs, def)
	}
	if err := rows.Err(); err != nil {
		return seeded{}, err
	}
	for _, name := range names {
		if _, err := fx.pool.Exec(ctx, "DROP INDEX "+pgx.Identifier{name}.Sanitize()); err != nil {
			return seeded{}, err
		}
	}
	n, err := fx.pool.CopyFrom(ctx, pgx.Identifier{"impressions"},
		[]string{"environment_id", "flag_key", "user_id", "value", "context", "evaluated_at"}, src)
	if err != nil {
		return seeded{}, fmt.Errorf("copy impressions: %w", err)
	}
	for _, def := range defs {
		if _, err := fx.pool.Exec(ctx, def); err != nil {
			return seeded{}, fmt.Errorf("rebuild index: %s: %w", def, err)
		}
	}
	out := seeded{rows: src.prodRows, other: int(n) - src.prodRows, copyTime: time.Since(t0), indexes: len(defs),
		from: now.Add(-span - time.Hour), to: now.Add(time.Hour)}
	if _, err := fx.pool.Exec(ctx, `UPDATE rollup_watermarks SET folded_through = (SELECT max(id) FROM impressions) WHERE kind = 'impressions'`); err != nil {
		return seeded{}, fmt.Errorf("move the fold's watermark: %w", err)
	}
	t0 = time.Now()
	if _, err := fx.pool.Exec(ctx, `VACUUM ANALYZE impressions`); err != nil {
		return seeded{}, fmt.Errorf("vacuum: %w", err)
	}
	out.vacuumTime = time.Since(t0)
	_ = fx.pool.QueryRow(ctx, `SELECT pg_size_pretty(pg_relation_size('impressions')) || ' heap, ' ||
		pg_size_pretty(pg_indexes_size('impressions')) || ' indexes'`).Scan(&out.tableSize)
	return out, nil
}
