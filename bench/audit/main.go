// Command audit measures what the workspace audit trail costs and how fast
// it reads (docs/performance.md, "Audit trail"):
//
//   - flag writes (PATCH) on two in-process servers over one database, one
//     recording the trail and one not, in interleaved rounds: p50 and p99 of
//     each and what the trail adds;
//   - a trail of -entries entries loaded into the same database (COPY of
//     rows built as the server builds them), sealed, then verified through
//     GET /api/audit/verify;
//   - GET /api/audit with each single filter, -reads requests each with
//     varied values: p50 and p99.
//
// Usage: go run . -db postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/bench/benchenv"
	"github.com/switchyard/switchyard/server/app"
	"github.com/switchyard/switchyard/server/audit"
	"github.com/switchyard/switchyard/server/store"
)

const (
	dbName = "switchyard_bench_audit"
	secret = "bench-audit-secret-of-at-least-32-characters"
)

func main() {
	adminURL := flag.String("db", os.Getenv("TEST_DATABASE_URL"), "PostgreSQL URL of a database whose role may create databases")
	entries := flag.Int("entries", 1_000_000, "audit entries to load for the read and verification measurements")
	writes := flag.Int("writes", 1000, "flag writes per server (with and without the trail) in each round")
	rounds := flag.Int("rounds", 9, "rounds of flag writes (their median is the result)")
	reads := flag.Int("reads", 200, "requests per filter")
	keep := flag.Bool("keep", false, "keep the scratch database "+dbName+" afterwards")
	flag.Parse()
	err := run(context.Background(), *adminURL, *entries, *writes, *rounds, *reads)
	if !*keep {
		err = errors.Join(err, benchenv.DropDatabase(context.Background(), *adminURL, dbName))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/audit:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, adminURL string, entries, writes, rounds, reads int) error {
	dbURL, err := benchenv.FreshDatabase(ctx, adminURL, dbName)
	if err != nil {
		return err
	}
	env := benchenv.Settings(dbURL, "", secret)
	with, err := benchenv.StartApp(ctx, env)
	if err != nil {
		return err
	}
	without, err := benchenv.StartApp(ctx, env, app.WithoutAuditTrail())
	if err != nil {
		return err
	}
	pool, err := store.Open(ctx, dbURL, 4)
	if err != nil {
		return err
	}
	defer pool.Close()
	token, envID, projectID, err := arrange(ctx, pool)
	if err != nil {
		return err
	}
	c := benchenv.Client{Token: token}

	fmt.Printf("flag writes: PATCH, %d per server, one on each in turn, %d rounds\n", writes, rounds)
	var added []float64
	for r := range rounds {
		onLat, offLat, err := measureWrites(ctx, c, with, without, envID, writes)
		if err != nil {
			return err
		}
		p50 := 100 * (float64(pct(onLat, 50))/float64(pct(offLat, 50)) - 1)
		p99 := 100 * (float64(pct(onLat, 99))/float64(pct(offLat, 99)) - 1)
		added = append(added, p50, p99)
		fmt.Printf("  round %d  without p50 %5.2f ms p99 %6.2f ms  with p50 %5.2f ms p99 %6.2f ms  the trail adds p50 %+5.1f %% p99 %+5.1f %%\n",
			r+1, ms(pct(offLat, 50)), ms(pct(offLat, 99)), ms(pct(onLat, 50)), ms(pct(onLat, 99)), p50, p99)
	}
	fmt.Printf("  the trail adds, median of the rounds: p50 %+5.1f %%  p99 %+5.1f %%\n", median(added, 0), median(added, 1))

	start := time.Now()
	if err := load(ctx, pool, entries, projectID, envID); err != nil {
		return err
	}
	fmt.Printf("\nloaded %d entries in %s\n", entries, time.Since(start).Round(time.Millisecond))
	trail := audit.New(audit.KeyFrom(secret), nil)
	start = time.Now()
	sealed := 0
	for {
		n, err := trail.Seal(ctx, pool)
		if err != nil {
			return err
		}
		if n == 0 {
			break
		}
		sealed += n
	}
	fmt.Printf("sealed %d entries in %s\n", sealed, time.Since(start).Round(time.Millisecond))
	if _, err := pool.Exec(ctx, "VACUUM ANALYZE audit_trail, audit_trail_hashes"); err != nil {
		return err
	}
	for range 2 {
		start = time.Now()
		var v struct {
			OK      bool  `json:"ok"`
			Checked int64 `json:"checked"`
		}
		if err := c.Do(ctx, http.MethodGet, with+"/api/audit/verify", nil, &v); err != nil {
			return err
		}
		fmt.Printf("GET /api/audit/verify: ok=%v checked=%d in %s\n", v.OK, v.Checked, time.Since(start).Round(time.Millisecond))
	}

	fmt.Printf("\nGET /api/audit (limit 50), %d requests per filter, over %d entries\n", reads, entries)
	for _, f := range filters(projectID, envID) {
		lat := make([]time.Duration, 0, reads)
		for i := range reads {
			q := f.query(i)
			t0 := time.Now()
			var page struct {
				Items []json.RawMessage `json:"items"`
			}
			if err := c.Do(ctx, http.MethodGet, with+"/api/audit?"+q.Encode(), nil, &page); err != nil {
				return fmt.Errorf("%s: %w", f.name, err)
			}
			lat = append(lat, time.Since(t0))
		}
		fmt.Printf("  %-28s p50 %7.2f ms  p99 %7.2f ms\n", f.name, ms(pct(lat, 50)), ms(pct(lat, 99)))
	}
	return nil
}

// arrange gives the seeded admin a token and returns it with the Default
// project's Production environment.
func arrange(ctx context.Context, pool *pgxpool.Pool) (token string, envID, projectID uuid.UUID, err error) {
	if token, err = benchenv.AdminToken(ctx, pool, benchenv.Admin); err != nil {
		return "", envID, projectID, err
	}
	envID, projectID, err = benchenv.Production(ctx, pool)
	return token, envID, projectID, err
}

// measureWrites PATCHes one flag per server, n times each after a warm-up.
func measureWrites(ctx context.Context, c benchenv.Client, with, without string, envID uuid.UUID, n int) (on, off []time.Duration, err error) {
	flags := map[string]string{with: "bench-with", without: "bench-without"}
	for base, key := range flags {
		body := map[string]any{"key": key, "is_enabled": true, "rollout_percentage": 50}
		if err := c.Do(ctx, http.MethodPost, base+"/api/environments/"+envID.String()+"/flags", body, nil); err != nil {
			return nil, nil, err
		}
	}
	// One write on each server in turn, the order swapped every time, so
	// that neither gains from going first and drift on a busy machine falls
	// on both alike; the first 100 of each warm both up.
	for i := range n + 100 {
		order := []string{with, without}
		if i%2 == 1 {
			order[0], order[1] = without, with
		}
		for _, base := range order {
			t0 := time.Now()
			patch := map[string]any{"rollout_percentage": i % 101}
			if err := c.Do(ctx, http.MethodPatch, base+"/api/environments/"+envID.String()+"/flags/"+flags[base], patch, nil); err != nil {
				return nil, nil, err
			}
			switch {
			case i < 100:
			case base == with:
				on = append(on, time.Since(t0))
			default:
				off = append(off, time.Since(t0))
			}
		}
	}
	return on, off, nil
}

// The loaded trail's shape: a workspace of projects, environments, users
// and their tokens, and flags, with a year of entries of mixed actions.
const (
	nProjects = 20
	nEnvs     = 3 // per project
	nUsers    = 500
	nFlags    = 5000
)

func email(i int) string  { return "user" + strconv.Itoa(i) + "@bench.example" }
func prefix(i int) string { return fmt.Sprintf("pat_%08x", i) }
func flagKey(i int) string {
	return "flag-" + strconv.Itoa(i)
}

// ids of the loaded projects and environments: deterministic, so that the
// read measurements can name them.
func projectOf(i int) uuid.UUID {
	return uuid.NewSHA1(uuid.NameSpaceOID, []byte("project-"+strconv.Itoa(i)))
}
func envOf(i int) uuid.UUID { return uuid.NewSHA1(uuid.NameSpaceOID, []byte("env-"+strconv.Itoa(i))) }

// load COPYs n entries built as the server builds them, then moves the
// id sequence past them.
func load(ctx context.Context, pool *pgxpool.Pool, n int, projectID, envID uuid.UUID) error {
	trail := audit.New(audit.KeyFrom(secret), nil)
	var first int64
	if err := pool.QueryRow(ctx, "SELECT audit_trail_last_id() + 1").Scan(&first); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	at := time.Now().Add(-365 * 24 * time.Hour)
	step := 365 * 24 * time.Hour / time.Duration(n)
	cols := []string{"id", "at", "action", "actor_kind", "actor_email", "actor_label", "resource_type", "resource_id", "project_id", "environment_id", "body", "mac"}
	const batch = 20000
	for done := 0; done < n; done += batch {
		rows := make([][]any, 0, batch)
		for i := done; i < min(n, done+batch); i++ {
			id := first + int64(i)
			at = at.Add(step)
			p := rng.IntN(nProjects)
			e := p*nEnvs + rng.IntN(nEnvs)
			pid, eid := projectOf(p), envOf(e)
			if p == 0 && e == 0 {
				pid, eid = projectID, envID
			}
			u := rng.IntN(nUsers)
			actor := audit.Actor{Kind: audit.ActorUser, ID: audit.Str(strconv.Itoa(u + 10)), Email: audit.Str(email(u))}
			if rng.IntN(4) == 0 {
				actor.Kind, actor.Label = audit.ActorToken, audit.Str(prefix(u))
			}
			c := entry(rng, pid, eid)
			req := audit.Request{RequestID: audit.Str(strconv.FormatInt(rng.Int64(), 36)), IP: audit.Str("10.0.0." + strconv.Itoa(u%250)), UserAgent: audit.Str("switchyard-bench/1.0")}
			row, err := trail.Row(id, at, actor, req, c)
			if err != nil {
				return err
			}
			rows = append(rows, []any{row.ID, row.At, row.Action, row.ActorKind, row.ActorEmail, row.ActorLabel, row.ResourceType, row.ResourceID, row.ProjectID, row.EnvironmentID, row.Body, row.Mac})
		}
		if _, err := pool.CopyFrom(ctx, pgx.Identifier{"audit_trail"}, cols, pgx.CopyFromRows(rows)); err != nil {
			return fmt.Errorf("copy entries: %w", err)
		}
	}
	_, err := pool.Exec(ctx, "SELECT setval('audit_trail_id_seq', $1)", first+int64(n)-1)
	return err
}

// entry is one change of the loaded mix: mostly flag writes, then sign-ins,
// segments, members, keys and environments.
func entry(rng *rand.Rand, pid, eid uuid.UUID) audit.Change {
	k := flagKey(rng.IntN(nFlags))
	flagState := func(enabled bool) map[string]any {
		return map[string]any{
			"key": k, "name": k, "description": "a flag of the bench's workspace", "is_enabled": enabled, "rollout_percentage": rng.IntN(101),
			"variants": []map[string]any{{"key": "control", "weight": 50}, {"key": "treatment", "weight": 50}},
			"rules":    []map[string]any{{"attribute": "country", "operator": "in", "values": []string{"DE", "FR", "NL"}}},
			"version":  rng.IntN(1000), "archived": false, "client_side": false,
		}
	}
	switch r := rng.IntN(100); {
	case r < 70:
		return audit.Change{Action: "flag.updated", Resource: audit.Resource{Type: audit.Flag, ID: k, Key: &k}, ProjectID: &pid, EnvironmentID: &eid, Before: flagState(false), After: flagState(true)}
	case r < 75:
		return audit.Change{Action: "flag.created", Resource: audit.Resource{Type: audit.Flag, ID: k, Key: &k}, ProjectID: &pid, EnvironmentID: &eid, After: flagState(true)}
	case r < 85:
		return audit.Change{Action: "auth.login", Resource: audit.Resource{Type: audit.Auth, ID: strconv.Itoa(rng.IntN(nUsers))}}
	case r < 88:
		return audit.Change{Action: "auth.login_failed", Resource: audit.Resource{Type: audit.Auth, ID: email(rng.IntN(nUsers))}}
	case r < 93:
		s := "segment-" + strconv.Itoa(rng.IntN(200))
		return audit.Change{Action: "segment.updated", Resource: audit.Resource{Type: audit.Segment, ID: s, Key: &s}, ProjectID: &pid, EnvironmentID: &eid,
			Before: map[string]any{"key": s, "rules": []any{}}, After: map[string]any{"key": s, "rules": []any{map[string]any{"attribute": "plan", "operator": "eq", "value": "pro"}}}}
	case r < 96:
		u := strconv.Itoa(rng.IntN(nUsers) + 10)
		return audit.Change{Action: "member.role_changed", Resource: audit.Resource{Type: audit.Member, ID: u}, ProjectID: &pid,
			Before: map[string]any{"user_id": u, "role": "viewer"}, After: map[string]any{"user_id": u, "role": "editor"}}
	case r < 98:
		id := strconv.Itoa(rng.IntN(100000))
		return audit.Change{Action: "sdk_key.created", Resource: audit.Resource{Type: audit.SDKKey, ID: id}, ProjectID: &pid, EnvironmentID: &eid,
			After: map[string]any{"id": id, "prefix": "sk_live_abcd", "kind": "server"}}
	default:
		return audit.Change{Action: "environment.updated", Resource: audit.Resource{Type: audit.Environment, ID: eid.String()}, ProjectID: &pid, EnvironmentID: &eid,
			Before: map[string]any{"require_approval": false}, After: map[string]any{"require_approval": true}}
	}
}

type filterCase struct {
	name  string
	query func(i int) url.Values
}

func filters(projectID, envID uuid.UUID) []filterCase {
	v := func(k string, f func(i int) string) func(i int) url.Values {
		return func(i int) url.Values { return url.Values{k: {f(i)}} }
	}
	return []filterCase{
		{"none", func(int) url.Values { return url.Values{} }},
		{"project_id", v("project_id", func(i int) string { return projectOf(i % nProjects).String() })},
		{"environment_id", v("environment_id", func(i int) string { return envOf(i % (nProjects * nEnvs)).String() })},
		{"actor (email)", v("actor", func(i int) string { return email(i * 7 % nUsers) })},
		{"actor (token prefix)", v("actor", func(i int) string { return prefix(i * 7 % nUsers) })},
		{"resource_type (rare)", v("resource_type", func(int) string { return "environment" })},
		{"resource_type (common)", v("resource_type", func(int) string { return "flag" })},
		{"resource_id", v("resource_id", func(i int) string { return flagKey(i * 13 % nFlags) })},
		{"action", v("action", func(int) string { return "member.role_changed" })},
		{"action prefix", v("action", func(int) string { return "auth.*" })},
		{"from (a day, months ago)", func(i int) url.Values {
			return url.Values{"from": {time.Now().Add(-time.Duration(100+i%100) * 24 * time.Hour).UTC().Format(time.RFC3339)}}
		}},
		{"to (months ago)", func(i int) url.Values {
			return url.Values{"to": {time.Now().Add(-time.Duration(100+i%100) * 24 * time.Hour).UTC().Format(time.RFC3339)}}
		}},
	}
}

func pct(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

// median is the median of every second value of v from the first-th.
func median(v []float64, first int) float64 {
	var s []float64
	for i := first; i < len(v); i += 2 {
		s = append(s, v[i])
	}
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
