package app_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/spaolacci/murmur3"

	"github.com/switchyard/switchyard/server/app"
	"github.com/switchyard/switchyard/server/internal/apptest"
)

// The guard's tests drive real traffic through the SDK-key ingest routes and
// move the server's clock instead of sleeping: a check is due when the
// clock passes its time, and the release guard (every 10 ms here) runs it.

// releaseEnv is a server with fast workers and a settable clock, and a
// boolean flag to release.
type releaseEnv struct {
	*measEnv
	sdkKey string
	flag   string
}

func newReleaseEnv(t *testing.T, opts ...app.Option) *releaseEnv {
	t.Helper()
	me := newMeasEnvWith(t, t0, nil, fastWorkers(opts...)...)
	re := &releaseEnv{measEnv: me, flag: "checkout"}
	if status, body := me.call(t, "POST", me.flags("production"), map[string]any{"key": re.flag, "is_enabled": true, "rollout_percentage": 0}); status != 200 {
		t.Fatalf("create flag = %d %v", status, body)
	}
	return re
}

// start starts a release of the flag and returns its id.
func (re *releaseEnv) start(t *testing.T, body map[string]any) string {
	t.Helper()
	status, out := re.call(t, "POST", re.flags("production")+"/"+re.flag+"/releases", body)
	if status != 201 {
		t.Fatalf("start release = %d %v", status, out)
	}
	return field(out, "id").(string)
}

func (re *releaseEnv) release(t *testing.T, id string) map[string]any {
	t.Helper()
	status, out := re.call(t, "GET", re.path("/releases/"+id), nil)
	if status != 200 {
		t.Fatalf("get release = %d %v", status, out)
	}
	return out.(map[string]any)
}

// waitStatus waits for the release to reach status (the guard runs apart
// from the test).
func (re *releaseEnv) waitStatus(t *testing.T, id, status string) map[string]any {
	t.Helper()
	var rel map[string]any
	waitFor(t, "release "+status, func() bool {
		rel = re.release(t, id)
		return rel["status"] == status
	})
	return rel
}

// waitChecks waits until the release has n checks and returns them.
func (re *releaseEnv) waitChecks(t *testing.T, id string, n int) []any {
	t.Helper()
	var checks []any
	waitFor(t, fmt.Sprintf("%d checks", n), func() bool {
		_, out := re.call(t, "GET", re.path("/releases/"+id+"/checks"), nil)
		checks, _ = out.([]any)
		return len(checks) >= n
	})
	return checks
}

func (re *releaseEnv) rollout(t *testing.T) any {
	t.Helper()
	_, f := re.call(t, "GET", re.flags("production")+"/"+re.flag, nil)
	return field(f, "rollout_percentage")
}

// inside reports whether a user is inside the flag's rollout at pct: the
// evaluator's bucket, murmur3(flag_key + ":" + user_key) % 100 < pct.
// The streaming hasher, not murmur3.Sum32: that one's unsafe reads of a
// short stack buffer trip -race's pointer checks.
func inside(flag, user string, pct int) bool {
	h := murmur3.New32()
	_, _ = h.Write([]byte(flag + ":" + user))
	return int(h.Sum32()%100) < pct
}

// armStats is what the test knows of one arm of one metric: each user's
// value.
type armStats []float64

func (a armStats) summary(kind string) (n, mean, variance float64) {
	n = float64(len(a))
	var sum, sq float64
	for _, v := range a {
		sum += v
		sq += v * v
	}
	if n == 0 {
		return 0, 0, 0
	}
	mean = sum / n
	if kind == "conversion" {
		return n, mean, mean * (1 - mean)
	}
	if n < 2 {
		return n, mean, 0
	}
	return n, mean, (sq - sum*sum/n) / (n - 1)
}

// expected computes a metric's lift, interval and p-value from the users'
// values, written out here apart from the server's code.
func expected(kind string, t, c armStats, alpha float64) (lift, lower, upper, p float64) {
	nt, mt, vt := t.summary(kind)
	nc, mc, vc := c.summary(kind)
	lift = mt/mc - 1
	se := math.Sqrt(vt/(nt*mc*mc) + vc*mt*mt/(nc*math.Pow(mc, 4)))
	n := nt + nc
	s2 := se * se * n
	rho := math.Sqrt((-2*math.Log(alpha) + math.Log(-2*math.Log(alpha)+1)) / 5000)
	h := math.Sqrt(s2) * math.Sqrt(2*(n*rho*rho+1)*math.Log(math.Sqrt(n*rho*rho+1)/alpha)/math.Pow(n*rho, 2))
	st2 := lift * lift * n / (se * se)
	p = math.Min(1, math.Sqrt(n*rho*rho+1)*math.Exp(-rho*rho*st2/(2*(n*rho*rho+1))))
	return lift, lift - h, lift + h, p
}

func mustUUID(t *testing.T, s string) uuid.UUID {
	t.Helper()
	id, err := uuid.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-6*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// A release whose treatment converts far worse, and errs more, is rolled
// back at its first check; the analysis equals the figures computed here
// from the users and events the test sent.
func TestReleaseRollsBackARegression(t *testing.T) {
	t.Parallel()
	re := newReleaseEnv(t)
	re.sdkKey = re.s.SDKKey(t, mustUUID(t, re.envs["production"]))
	stream := openStream(t, re.s, "", map[string]string{"Authorization": "Bearer " + re.sdkKey})
	for ev := stream.next(t); ev.Name != "ready"; ev = stream.next(t) {
	}
	id := re.start(t, map[string]any{
		"stages": []map[string]any{{"percentage": 50, "duration_seconds": 3600}},
		"metrics": []map[string]any{
			{"event_key": "purchase", "kind": "conversion", "bad_direction": "decrease", "tolerance": 0.05},
			{"event_key": "error", "kind": "mean", "bad_direction": "increase", "tolerance": 0.05},
		},
		"min_users": 50, "check_interval_seconds": 60,
	})
	if r := re.rollout(t); r != float64(50) {
		t.Fatalf("the first stage wrote rollout %v, want 50", r)
	}
	// Starting reaches open streams as an ordinary flag update.
	if u := sseData(t, stream.next(t).Data); field(u, "flag", "rollout_percentage") != float64(50) {
		t.Fatalf("the stream got %v, want the flag at 50 %%", u)
	}
	re.clock.Advance(10 * time.Second)
	exposed, purchased := t0.Add(time.Second), t0.Add(2*time.Second)
	var imps, events []map[string]any
	want := map[string][2]armStats{} // metric → [treatment, control]
	purchaseT, purchaseC, errT, errC := armStats{}, armStats{}, armStats{}, armStats{}
	for i, u := range users("u", 400) {
		treat := inside(re.flag, u, 50)
		imps = append(imps, imp(re.flag, u, fmt.Sprint(treat), exposed))
		bought := (treat && i%10 == 0) || (!treat && i%10 < 6)
		if bought {
			events = append(events, goal("purchase", u, purchased))
		}
		errs := 0
		if treat {
			errs = i % 4 // 0..3 errors, with a null value counting one each
		} else if i%5 == 0 {
			errs = 1
		}
		for range errs {
			events = append(events, goal("error", u, purchased))
		}
		v := 0.0
		if bought {
			v = 1
		}
		if treat {
			purchaseT, errT = append(purchaseT, v), append(errT, float64(errs))
		} else {
			purchaseC, errC = append(purchaseC, v), append(errC, float64(errs))
		}
	}
	// An impression before the start and an event before exposure count for nothing.
	imps = append(imps, imp(re.flag, "early", "true", t0.Add(-time.Hour)))
	events = append(events, goal("purchase", "u1", t0))
	want["purchase"] = [2]armStats{purchaseT, purchaseC}
	want["error"] = [2]armStats{errT, errC}
	re.mustPost(t, "/impressions", imps)
	for i := 0; i < len(events); i += 500 {
		re.mustPost(t, "/events", events[i:min(i+500, len(events))])
	}
	re.clock.Advance(time.Minute) // the first check is due
	rel := re.waitStatus(t, id, "rolled_back")
	if reason, _ := rel["reason"].(string); !strings.HasPrefix(reason, "purchase regressed") {
		t.Errorf("reason %q, want the purchase metric named", reason)
	}
	if r := re.rollout(t); r != float64(0) {
		t.Errorf("after the rollback the rollout is %v, want 0", r)
	}
	if u := sseData(t, stream.next(t).Data); field(u, "flag", "rollout_percentage") != float64(0) {
		t.Errorf("after the rollback the stream got %v, want the flag at 0 %%", u)
	}
	checks := re.waitChecks(t, id, 1)
	last := checks[len(checks)-1]
	metrics, _ := field(last, "metrics").([]any)
	if len(metrics) != 2 {
		t.Fatalf("analysis %v", last)
	}
	for i, name := range []string{"purchase", "error"} {
		m := metrics[i]
		kind := field(m, "kind").(string)
		arms := want[name]
		if got := field(m, "treatment", "users"); got != float64(len(arms[0])) {
			t.Errorf("%s treatment users %v, want %d", name, got, len(arms[0]))
		}
		if got := field(m, "control", "users"); got != float64(len(arms[1])) {
			t.Errorf("%s control users %v, want %d", name, got, len(arms[1]))
		}
		lift, lower, upper, p := expected(kind, arms[0], arms[1], 0.05)
		for f, w := range map[string]float64{"lift": lift, "ci_lower": lower, "ci_upper": upper, "p_value": p} {
			if got, ok := field(m, f).(float64); !ok || !near(got, w) {
				t.Errorf("%s %s = %v, want %v", name, f, field(m, f), w)
			}
		}
	}
	if field(metrics[0], "regressed") != true {
		t.Errorf("purchase not regressed: %v", metrics[0])
	}
	if srm := field(last, "srm"); srm == nil || field(srm, "mismatch") != false {
		t.Errorf("srm %v, want a check without mismatch (the split follows the buckets)", srm)
	}
}

// A healthy release walks its stages, writing each percentage, and
// completes with the flag left at the last one.
func TestHealthyReleaseCompletes(t *testing.T) {
	t.Parallel()
	re := newReleaseEnv(t)
	id := re.start(t, map[string]any{
		"stages": []map[string]any{
			{"percentage": 20, "duration_seconds": 600}, {"percentage": 60, "duration_seconds": 600},
			{"percentage": 100, "duration_seconds": 600},
		},
		"metrics":   []map[string]any{{"event_key": "purchase", "kind": "conversion", "bad_direction": "decrease", "tolerance": 0.1}},
		"min_users": 20, "check_interval_seconds": 3600,
	})
	re.clock.Advance(10 * time.Second)
	var imps, events []map[string]any
	for i, u := range users("u", 300) {
		imps = append(imps, imp(re.flag, u, fmt.Sprint(inside(re.flag, u, 20)), t0.Add(time.Second)))
		if i%3 == 0 {
			events = append(events, goal("purchase", u, t0.Add(2*time.Second)))
		}
	}
	re.mustPost(t, "/impressions", imps)
	re.mustPost(t, "/events", events)
	for stage, pct := range []int{60, 100} {
		re.clock.Advance(601 * time.Second)
		waitFor(t, fmt.Sprintf("stage %d", stage+1), func() bool {
			return field(re.release(t, id), "stage_index") == float64(stage+1)
		})
		if r := re.rollout(t); r != float64(pct) {
			t.Fatalf("stage %d wrote rollout %v, want %d", stage+1, r, pct)
		}
	}
	re.clock.Advance(601 * time.Second)
	rel := re.waitStatus(t, id, "completed")
	if rel["ended_at"] == nil {
		t.Errorf("completed without ended_at: %v", rel)
	}
	if r := re.rollout(t); r != float64(100) {
		t.Errorf("after completion the rollout is %v, want 100", r)
	}
	// The release's own writes: the start and two advances, attributed to it.
	if n := re.count(t, `SELECT count(*) FROM audit_entries WHERE flag_key = $1 AND action = 'update' AND metadata->>'release_id' = $2`, re.flag, id); n != 3 {
		t.Errorf("%d flag writes by the release, want 3", n)
	}
}

// A split far from the stage's percentage pauses a running release on the
// sample-ratio check; the release keeps its percentage.
func TestLopsidedSplitPauses(t *testing.T) {
	t.Parallel()
	re := newReleaseEnv(t)
	id := re.start(t, map[string]any{
		"stages":    []map[string]any{{"percentage": 50, "duration_seconds": 3600}},
		"metrics":   []map[string]any{{"event_key": "purchase", "kind": "conversion", "bad_direction": "decrease", "tolerance": 0.1}},
		"min_users": 50, "check_interval_seconds": 60,
	})
	re.clock.Advance(10 * time.Second)
	var imps []map[string]any
	for i, u := range users("u", 400) {
		imps = append(imps, imp(re.flag, u, fmt.Sprint(i%10 != 0), t0.Add(time.Second))) // 90 % treatment
	}
	re.mustPost(t, "/impressions", imps)
	re.clock.Advance(time.Minute)
	rel := re.waitStatus(t, id, "paused")
	if reason, _ := rel["reason"].(string); !strings.Contains(reason, "sample ratio mismatch") {
		t.Errorf("reason %q, want the sample-ratio check named", reason)
	}
	if r := re.rollout(t); r != float64(50) {
		t.Errorf("a paused release moved the rollout to %v", r)
	}
	srm := field(rel, "analysis", "srm")
	if field(srm, "users") != float64(400) || field(srm, "treatment_users") != float64(360) || field(srm, "mismatch") != true {
		t.Errorf("srm %v, want 360 of 400 users and a mismatch", srm)
	}
}

// Two instances on one database run each check once: the flag writes and
// the checks are exactly those of one guard.
func TestTwoInstancesRunEachCheckOnce(t *testing.T) {
	t.Parallel()
	re := newReleaseEnv(t)
	apptest.Start(t, map[string]string{"DATABASE_URL": re.s.DBURL}, fastWorkers(app.WithClock(re.clock.Now))...)
	id := re.start(t, map[string]any{
		"stages": []map[string]any{
			{"percentage": 10, "duration_seconds": 60}, {"percentage": 20, "duration_seconds": 60},
			{"percentage": 30, "duration_seconds": 60}, {"percentage": 40, "duration_seconds": 60},
		},
		"metrics":   []map[string]any{{"event_key": "purchase", "kind": "conversion", "bad_direction": "decrease", "tolerance": 0.1}},
		"min_users": 1000, "check_interval_seconds": 3600,
	})
	for stage := 1; stage <= 4; stage++ {
		re.clock.Advance(61 * time.Second)
		if stage < 4 {
			waitFor(t, fmt.Sprintf("stage %d", stage), func() bool {
				return field(re.release(t, id), "stage_index") == float64(stage)
			})
		}
	}
	re.waitStatus(t, id, "completed")
	time.Sleep(100 * time.Millisecond) // ten more guard rounds on each instance
	if n := re.count(t, `SELECT count(*) FROM audit_entries WHERE flag_key = $1 AND action = 'update' AND metadata->>'release_id' = $2`, re.flag, id); n != 4 {
		t.Errorf("%d flag writes by the release, want 4 (the start and three advances)", n)
	}
	if n := re.count(t, `SELECT count(*) FROM release_checks WHERE release_id = $1`, id); n != 4 {
		t.Errorf("%d checks, want 4 (one per stage end)", n)
	}
	_, flag := re.call(t, "GET", re.flags("production")+"/"+re.flag, nil)
	if v := field(flag, "version"); v != float64(5) {
		t.Errorf("flag version %v, want 5 (created, then four release writes)", v)
	}
}

// A user's arm is their first impression since the start, even when an
// earlier impression arrives after a later one was folded: the user moves
// arms, with the goal events since that earlier exposure.
func TestEarlierExposureArrivingLateMovesTheUser(t *testing.T) {
	t.Parallel()
	re := newReleaseEnv(t)
	id := re.start(t, map[string]any{
		"stages":    []map[string]any{{"percentage": 50, "duration_seconds": 3600}},
		"metrics":   []map[string]any{{"event_key": "purchase", "kind": "conversion", "bad_direction": "decrease", "tolerance": 10}},
		"min_users": 1, "check_interval_seconds": 60,
	})
	re.clock.Advance(10 * time.Second)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	re.mustPost(t, "/impressions", []map[string]any{imp(re.flag, "u1", "true", at(5))})
	re.mustPost(t, "/events", []map[string]any{goal("purchase", "u1", at(6))})
	re.clock.Advance(time.Minute)
	checks := re.waitChecks(t, id, 1)
	m := field(checks[0], "metrics").([]any)[0]
	if field(m, "treatment", "users") != float64(1) || field(m, "treatment", "mean") != float64(1) || field(m, "control", "users") != float64(0) {
		t.Fatalf("first check %v, want u1 converted in treatment", m)
	}
	re.mustPost(t, "/impressions", []map[string]any{imp(re.flag, "u1", "false", at(2)), imp(re.flag, "u2", "false", at(3))})
	re.mustPost(t, "/events", []map[string]any{goal("purchase", "u2", at(1))}) // before u2's exposure
	re.clock.Advance(time.Minute)
	checks = re.waitChecks(t, id, 2)
	m = field(checks[1], "metrics").([]any)[0]
	if field(m, "treatment", "users") != float64(0) || field(m, "control", "users") != float64(2) || field(m, "control", "mean") != 0.5 {
		t.Errorf("second check %v, want u1 (converted) and u2 (not) in control", m)
	}
	if n := field(checks[1], "control_users"); n != float64(2) {
		t.Errorf("control_users %v, want 2", n)
	}
}

// A check cut short by kill -9 leaves nothing behind, and the restarted
// server runs it whole, once: the real binary's check is held mid-way (its
// flag write waits for a lock the test holds), killed, and run again.
func TestReleaseCheckSurvivesKill(t *testing.T) {
	t.Parallel()
	bin := buildServer(t)
	ctl := apptest.Start(t, nil, app.WithoutScheduler())
	_, token := ctl.User(t, "admin@example.com", "admin")
	_, envs := ctl.DefaultProject(t)
	fe := &flagEnv{s: ctl, token: token, envs: map[string]string{"production": envs["production"].String()}}
	if status, body := fe.call(t, "POST", fe.flags("production"), map[string]any{"key": "checkout", "is_enabled": true}); status != 200 {
		t.Fatalf("create flag = %d %v", status, body)
	}
	status, out := fe.call(t, "POST", fe.flags("production")+"/checkout/releases", map[string]any{
		"stages":    []map[string]any{{"percentage": 10, "duration_seconds": 1}, {"percentage": 20, "duration_seconds": 3600}},
		"metrics":   []map[string]any{{"event_key": "purchase", "kind": "conversion", "bad_direction": "decrease", "tolerance": 0.1}},
		"min_users": 100, "check_interval_seconds": 3600,
	})
	if status != 201 {
		t.Fatalf("start release = %d %v", status, out)
	}
	id := field(out, "id").(string)
	ctx := t.Context()
	hold, err := ctl.DB(t).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = hold.Rollback(ctx) }()
	if _, err := hold.Exec(ctx, `SELECT 1 FROM flags WHERE environment_id = $1 AND key = 'checkout' FOR UPDATE`, fe.envs["production"]); err != nil {
		t.Fatal(err)
	}
	first := startProcess(t, bin, ctl.DBURL)
	waitFor(t, "the check to wait for the flag's lock", func() bool {
		return fe.count(t, `SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE NOT l.granted AND c.relname = 'flags'`) > 0 ||
			fe.count(t, `SELECT count(*) FROM pg_locks WHERE NOT granted AND locktype = 'transactionid'`) > 0
	})
	first.kill(t)
	if err := hold.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if n := fe.count(t, `SELECT count(*) FROM release_checks WHERE release_id = $1`, id); n != 0 {
		t.Fatalf("the killed check left %d checks behind", n)
	}
	if n := fe.count(t, `SELECT stage_index FROM releases WHERE id = $1`, id); n != 0 {
		t.Fatalf("the killed check moved the release to stage %d", n)
	}
	startProcess(t, bin, ctl.DBURL)
	waitFor(t, "the restarted server's check", func() bool {
		return fe.count(t, `SELECT stage_index FROM releases WHERE id = $1`, id) == 1
	})
	if n := fe.count(t, `SELECT count(*) FROM release_checks WHERE release_id = $1`, id); n != 1 {
		t.Errorf("%d checks, want 1", n)
	}
	if n := fe.count(t, `SELECT count(*) FROM audit_entries WHERE flag_key = 'checkout' AND action = 'update' AND metadata->>'release_id' = $1`, id); n != 2 {
		t.Errorf("%d flag writes by the release, want 2 (the start and one advance)", n)
	}
	if n := fe.count(t, `SELECT version FROM flags WHERE environment_id = $1 AND key = 'checkout'`, fe.envs["production"]); n != 3 {
		t.Errorf("flag version %d, want 3", n)
	}
}
