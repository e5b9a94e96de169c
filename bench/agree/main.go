// Command agree measures what it costs that every instance agrees
// (docs/performance.md, "Every instance agrees"): two deployments of -n
// in-process instances over one database and one Redis, one as shipped and
// one built WithoutAgreement, side by side in one run:
//
//   - flag writes (PATCH) on the first instance of each, one on each in
//     turn: p50 and p99, and what agreement adds;
//   - the read paths on the second instance of each (snapshot, OFREP single
//     and bulk, a stream's bootstrap): the process's CPU time per request,
//     in alternating rounds, the median of the rounds.
//
// Usage: go run . -db postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable -redis redis://127.0.0.1:6379
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/bench/benchenv"
	"github.com/switchyard/switchyard/server/app"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/store"
)

const (
	dbName = "switchyard_bench_agree"
	secret = "bench-agree-secret-of-at-least-32-characters"
)

func main() {
	adminURL := flag.String("db", os.Getenv("TEST_DATABASE_URL"), "PostgreSQL URL of a database whose role may create databases")
	redisURL := flag.String("redis", envOr("TEST_REDIS_URL", "redis://127.0.0.1:6379"), "Redis URL")
	counts := flag.String("n", "2,3", "instances per deployment, one measurement each")
	writes := flag.Int("writes", 1000, "flag writes per deployment")
	reads := flag.Int("reads", 20000, "requests per read path and deployment, in rounds of 500")
	flag.Parse()
	err := run(context.Background(), *adminURL, *redisURL, *counts, *writes, *reads)
	err = errors.Join(err, benchenv.DropDatabase(context.Background(), *adminURL, dbName))
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/agree:", err)
		os.Exit(1)
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func run(ctx context.Context, adminURL, redisURL, counts string, writes, reads int) error {
	for _, field := range strings.Split(counts, ",") {
		var n int
		if _, err := fmt.Sscan(field, &n); err != nil || n < 2 {
			return fmt.Errorf("-n: %q is not a count of at least 2", field)
		}
		if err := measure(ctx, adminURL, redisURL, n, writes, reads); err != nil {
			return err
		}
	}
	return measureRedisDown(ctx, adminURL)
}

// measureRedisDown runs two instances whose Redis never answers (a closed
// port): writes then take the change-log lease, and every read on the
// other instance first reads the change log.
func measureRedisDown(ctx context.Context, adminURL string) error {
	dbURL, err := benchenv.FreshDatabase(ctx, adminURL, dbName)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	env := benchenv.Settings(dbURL, "redis://127.0.0.1:1/0", secret) // a closed port
	d := &deployment{name: "Redis down", flag: "bench-down"}
	if d.urls, err = startInstances(ctx, env, 2); err != nil {
		return err
	}
	pool, err := store.Open(ctx, dbURL, 2)
	if err != nil {
		return err
	}
	defer pool.Close()
	if d.token, d.key, d.env, d.proj, err = arrange(ctx, pool); err != nil {
		return err
	}
	flags := "/api/environments/" + d.env.String() + "/flags"
	if err := d.do(ctx, d.urls[0], http.MethodPost, flags, map[string]any{"key": d.flag, "is_enabled": true}, nil); err != nil {
		return err
	}
	var lat []time.Duration
	stale := 0
	for i := range 20 {
		var f struct {
			Version int64 `json:"version"`
		}
		start := time.Now()
		if err := d.do(ctx, d.urls[0], http.MethodPatch, flags+"/"+d.flag, map[string]any{"rollout_percentage": i}, &f); err != nil {
			return err
		}
		lat = append(lat, time.Since(start))
		var snap []struct {
			Key     string `json:"key"`
			Version int64  `json:"version"`
		}
		if err := d.sdk(ctx, http.MethodGet, "/flags/snapshot", nil, &snap); err != nil {
			return err
		}
		for _, s := range snap {
			if s.Key == d.flag && s.Version < f.Version {
				stale++
			}
		}
	}
	fmt.Printf("Redis down, 2 instances: 20 flag writes p50 %.0f ms, slowest %.0f ms; stale snapshots on the other instance: %d of 20\n",
		ms(pct(lat, 50)), ms(slices.Max(lat)), stale)
	cancel()
	time.Sleep(500 * time.Millisecond)
	return nil
}

// deployment is n instances on one Redis channel.
type deployment struct {
	name  string
	urls  []string
	flag  string
	token string
	key   string
	env   uuid.UUID
	proj  uuid.UUID
}

func measure(ctx context.Context, adminURL, redisURL string, n, writes, reads int) error {
	dbURL, err := benchenv.FreshDatabase(ctx, adminURL, dbName)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	env := benchenv.Settings(dbURL, redisURL, secret)
	with := &deployment{name: "with agreement", flag: "bench-with"}
	without := &deployment{name: "without", flag: "bench-without"}
	for _, d := range []*deployment{with, without} {
		opts := []app.Option{app.WithBusChannel("switchyard-bench:" + uuid.NewString())}
		if d == without {
			opts = append(opts, app.WithoutAgreement())
		}
		var err error
		if d.urls, err = startInstances(ctx, env, n, opts...); err != nil {
			return err
		}
	}
	pool, err := store.Open(ctx, dbURL, 2)
	if err != nil {
		return err
	}
	defer pool.Close()
	token, key, envID, projID, err := arrange(ctx, pool)
	if err != nil {
		return err
	}
	for _, d := range []*deployment{with, without} {
		d.token, d.key, d.env, d.proj = token, key, envID, projID
		if err := d.do(ctx, d.urls[0], http.MethodPost, "/api/environments/"+envID.String()+"/flags",
			map[string]any{"key": d.flag, "is_enabled": true, "rollout_percentage": 50}, nil); err != nil {
			return err
		}
	}
	time.Sleep(2 * time.Second) // every instance has heard the others

	fmt.Printf("%d instances per deployment\n", n)
	fmt.Printf("flag writes: PATCH on the first instance, %d per deployment, one on each in turn\n", writes)
	lat := map[*deployment][]time.Duration{}
	for i := range writes + 100 {
		order := []*deployment{with, without}
		if i%2 == 1 {
			order[0], order[1] = without, with
		}
		for _, d := range order {
			start := time.Now()
			if err := d.do(ctx, d.urls[0], http.MethodPatch, "/api/environments/"+envID.String()+"/flags/"+d.flag,
				map[string]any{"rollout_percentage": i % 101}, nil); err != nil {
				return err
			}
			if i >= 100 {
				lat[d] = append(lat[d], time.Since(start))
			}
		}
	}
	for _, d := range []*deployment{without, with} {
		fmt.Printf("  %-16s p50 %6.2f ms  p99 %6.2f ms\n", d.name, ms(pct(lat[d], 50)), ms(pct(lat[d], 99)))
	}
	fmt.Printf("  %-16s p50 %+6.2f ms  p99 %+6.2f ms\n", "agreement adds",
		ms(pct(lat[with], 50)-pct(lat[without], 50)), ms(pct(lat[with], 99)-pct(lat[without], 99)))

	fmt.Println("revocations: DELETE of an SDK key on the first instance, 200 per deployment, one on each in turn")
	rev := map[*deployment][]time.Duration{}
	for i := range 200 {
		order := []*deployment{with, without}
		if i%2 == 1 {
			order[0], order[1] = without, with
		}
		for _, d := range order {
			var k struct {
				ID int64 `json:"id"`
			}
			if err := d.do(ctx, d.urls[0], http.MethodPost, "/api/projects/"+d.proj.String()+"/keys",
				map[string]any{"environment_id": envID, "name": "revoked"}, &k); err != nil {
				return err
			}
			start := time.Now()
			if err := d.do(ctx, d.urls[0], http.MethodDelete, fmt.Sprintf("/api/projects/%s/keys/%d", d.proj, k.ID), nil, nil); err != nil {
				return err
			}
			rev[d] = append(rev[d], time.Since(start))
		}
	}
	for _, d := range []*deployment{without, with} {
		fmt.Printf("  %-16s p50 %6.2f ms  p99 %6.2f ms\n", d.name, ms(pct(rev[d], 50)), ms(pct(rev[d], 99)))
	}
	fmt.Printf("  %-16s p50 %+6.2f ms  p99 %+6.2f ms\n", "agreement adds",
		ms(pct(rev[with], 50)-pct(rev[without], 50)), ms(pct(rev[with], 99)-pct(rev[without], 99)))

	fmt.Printf("read paths on the second instance: CPU per request (the whole process), median of %d rounds of 500\n", reads/500)
	for _, path := range readPaths() {
		cpu := map[*deployment][]time.Duration{}
		for r := range max(1, reads/500) {
			order := []*deployment{with, without}
			if r%2 == 1 {
				order[0], order[1] = without, with
			}
			for _, d := range order {
				before := cpuTime()
				for range 500 {
					if err := path.read(ctx, d); err != nil {
						return fmt.Errorf("%s: %w", path.name, err)
					}
				}
				cpu[d] = append(cpu[d], (cpuTime()-before)/500)
			}
		}
		w, wo := median(cpu[with]), median(cpu[without])
		fmt.Printf("  %-22s without %6.1f µs  with %6.1f µs  %+5.1f %%\n", path.name,
			us(wo), us(w), 100*(float64(w)/float64(wo)-1))
	}
	n2, err := catchUps(ctx, with.urls[1])
	if err != nil {
		return err
	}
	fmt.Printf("  reads that waited for the change log on that instance: %v\n\n", n2)
	cancel()
	time.Sleep(500 * time.Millisecond) // the instances let go of the database
	return nil
}

// catchUps reads switchyard_catch_up_reads_total from an instance's
// /metrics (served on its main port when METRICS_ADDR is unset).
func catchUps(ctx context.Context, base string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "switchyard_catch_up_reads_total "); ok {
			return v, nil
		}
	}
	return "", fmt.Errorf("no switchyard_catch_up_reads_total in %s/metrics", base)
}

type readPath struct {
	name string
	read func(ctx context.Context, d *deployment) error
}

func readPaths() []readPath {
	evalBody := map[string]any{"context": map[string]any{"targetingKey": "user-1"}}
	return []readPath{
		{"GET /flags/snapshot", func(ctx context.Context, d *deployment) error {
			return d.sdk(ctx, http.MethodGet, "/flags/snapshot", nil, nil)
		}},
		{"OFREP single", func(ctx context.Context, d *deployment) error {
			return d.sdk(ctx, http.MethodPost, "/ofrep/v1/evaluate/flags/"+d.flag, evalBody, nil)
		}},
		{"OFREP bulk", func(ctx context.Context, d *deployment) error {
			return d.sdk(ctx, http.MethodPost, "/ofrep/v1/evaluate/flags", evalBody, nil)
		}},
		{"stream bootstrap", func(ctx context.Context, d *deployment) error { return d.bootstrap(ctx) }},
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// sdk sends an SDK request (with the SDK key) to the second instance.
func (d *deployment) sdk(ctx context.Context, method, path string, body, out any) error {
	return benchenv.Client{Token: d.key}.Do(ctx, method, d.urls[1]+path, body, out)
}

// startInstances starts n instances on env and returns their base URLs.
func startInstances(ctx context.Context, env map[string]string, n int, opts ...app.Option) ([]string, error) {
	var urls []string
	for range n {
		u, err := benchenv.StartApp(ctx, env, opts...)
		if err != nil {
			return nil, err
		}
		urls = append(urls, u)
	}
	return urls, nil
}

// bootstrap opens a stream on the second instance and reads to its ready.
func (d *deployment) bootstrap(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.urls[1]+"/stream", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+d.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if sc.Text() == "event: ready" {
			return nil
		}
	}
	return fmt.Errorf("stream ended before ready: %v", sc.Err())
}

func (d *deployment) do(ctx context.Context, base, method, path string, body, out any) error {
	return benchenv.Client{Token: d.token}.Do(ctx, method, base+path, body, out)
}

// arrange gives the seeded admin a token and the Production environment an
// SDK key, and returns them with the environment.
func arrange(ctx context.Context, pool *pgxpool.Pool) (token, key string, envID, projID uuid.UUID, err error) {
	full, err := benchenv.AdminToken(ctx, pool, benchenv.Admin)
	if err != nil {
		return "", "", envID, projID, err
	}
	if envID, projID, err = benchenv.Production(ctx, pool); err != nil {
		return "", "", envID, projID, err
	}
	sdk, sdkPrefix, sdkHash, err := auth.NewCredential(auth.SDKKeyKind)
	if err != nil {
		return "", "", envID, projID, err
	}
	_, err = pool.Exec(ctx, `INSERT INTO sdk_keys (project_id, environment_id, name, key_hash, prefix)
		SELECT project_id, id, 'bench', $2, $3 FROM environments WHERE id = $1`, envID, sdkHash, sdkPrefix)
	return full, sdk, envID, projID, err
}

func pct(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

func median(d []time.Duration) time.Duration { return pct(d, 50) }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 }
