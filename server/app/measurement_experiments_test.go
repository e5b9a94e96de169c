package app_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/switchyard/switchyard/server/internal/apptest"
)

func TestExperimentCRUD(t *testing.T) {
	t.Parallel()
	me := newMeasEnv(t)
	base := me.path("/experiments")
	status, e := me.call(t, "POST", base, map[string]any{
		"key": "checkout-test", "name": "  Checkout test ", "flag_key": "not-a-flag-yet", "goal_event_key": "purchase",
		"description": "does the new flow sell more", "control_variant": "false",
	})
	if status != 200 {
		t.Fatalf("create = %d %v", status, e)
	}
	want := map[string]any{
		"key": "checkout-test", "name": "Checkout test", "flag_key": "not-a-flag-yet", "goal_event_key": "purchase",
		"description": "does the new flow sell more", "control_variant": "false", "status": "running",
		"environment_id": me.envs["production"],
	}
	for k, v := range want {
		if d := cmp.Diff(v, field(e, k)); d != "" {
			t.Errorf("created %s (-want +got): %s", k, d)
		}
	}
	if status, _ := me.call(t, "POST", base, map[string]any{"key": "checkout-test", "name": "again", "flag_key": "f", "goal_event_key": "g"}); status != 409 {
		t.Errorf("duplicate key = %d, want 409", status)
	}
	// The same key in another environment is another experiment.
	other := "/api/environments/" + me.envs["staging"] + "/experiments"
	if status, _ := me.call(t, "POST", other, map[string]any{"key": "checkout-test", "name": "x", "flag_key": "f", "goal_event_key": "g"}); status != 200 {
		t.Errorf("same key in staging = %d, want 200", status)
	}
	for _, tt := range []struct {
		name, field string
		body        map[string]any
	}{
		{"bad key", "key", map[string]any{"key": "a b", "name": "x", "flag_key": "f", "goal_event_key": "g"}},
		{"long key", "key", map[string]any{"key": strings.Repeat("k", 101), "name": "x", "flag_key": "f", "goal_event_key": "g"}},
		{"bad flag key", "flag_key", map[string]any{"key": "k", "name": "x", "flag_key": "f!", "goal_event_key": "g"}},
		{"bad goal key", "goal_event_key", map[string]any{"key": "k", "name": "x", "flag_key": "f", "goal_event_key": ""}},
		{"empty name", "name", map[string]any{"key": "k", "name": "", "flag_key": "f", "goal_event_key": "g"}},
		{"blank name", "name", map[string]any{"key": "k", "name": "   ", "flag_key": "f", "goal_event_key": "g"}},
		{"missing name", "name", map[string]any{"key": "k", "flag_key": "f", "goal_event_key": "g"}},
	} {
		if status, body := me.call(t, "POST", base, tt.body); status != 422 || !detailsName(body, tt.field) {
			t.Errorf("%s: create = %d %v, want 422 naming %s", tt.name, status, body, tt.field)
		}
	}

	// Any status may move to any other.
	for _, s := range []string{"paused", "running", "completed", "paused", "completed", "running"} {
		if status, e := me.call(t, "PATCH", base+"/checkout-test", map[string]any{"status": s}); status != 200 || field(e, "status") != s {
			t.Fatalf("status → %s = %d %v", s, status, e)
		}
	}
	status, e = me.call(t, "PATCH", base+"/checkout-test", map[string]any{"name": "Renamed", "goal_event_key": "signup", "control_variant": nil})
	if status != 200 || field(e, "name") != "Renamed" || field(e, "goal_event_key") != "signup" || field(e, "control_variant") != nil ||
		field(e, "description") != "does the new flow sell more" || field(e, "flag_key") != "not-a-flag-yet" {
		t.Errorf("patch = %d %v", status, e)
	}
	for _, body := range []map[string]any{{"status": "stopped"}, {"goal_event_key": "a b"}, {"name": ""}} {
		if status, b := me.call(t, "PATCH", base+"/checkout-test", body); status != 422 {
			t.Errorf("patch %v = %d %v, want 422", body, status, b)
		}
	}
	if status, _ := me.call(t, "PATCH", base+"/nope", map[string]any{"status": "paused"}); status != 404 {
		t.Errorf("patch unknown = %d, want 404", status)
	}
	if status, e := me.call(t, "GET", base+"/checkout-test", nil); status != 200 || field(e, "name") != "Renamed" {
		t.Errorf("get = %d %v", status, e)
	}
	if status, _ := me.call(t, "GET", base+"/nope", nil); status != 404 {
		t.Errorf("get unknown = %d, want 404", status)
	}
	if status, _ := me.call(t, "GET", base+"/nope/results", nil); status != 404 {
		t.Errorf("results unknown = %d, want 404", status)
	}

	// Writes need editor or above; viewers read.
	project, _ := me.s.DefaultProject(t)
	viewerID, viewer := me.s.User(t, "viewer@example.com", "viewer")
	me.s.Member(t, project, viewerID, "viewer")
	editorID, editor := me.s.User(t, "editor@example.com", "editor")
	me.s.Member(t, project, editorID, "editor")
	if status, _ := me.call(t, "POST", base, map[string]any{"key": "v", "name": "v", "flag_key": "f", "goal_event_key": "g"}, viewer); status != 403 {
		t.Errorf("viewer create = %d, want 403", status)
	}
	if status, _ := me.call(t, "GET", base+"/checkout-test/results", nil, viewer); status != 200 {
		t.Errorf("viewer results = %d, want 200", status)
	}
	if status, _ := me.call(t, "POST", base, map[string]any{"key": "second", "name": "Second", "flag_key": "f", "goal_event_key": "g"}, editor); status != 200 {
		t.Errorf("editor create = %d, want 200", status)
	}
	status, list := me.call(t, "GET", base, nil, viewer)
	if l, _ := list.([]any); status != 200 || len(l) != 2 || field(l[0], "key") != "second" {
		t.Errorf("list = %d %v, want second then checkout-test", status, list)
	}

	if status, _ := me.call(t, "DELETE", base+"/checkout-test", nil, viewer); status != 403 {
		t.Errorf("viewer delete = %d, want 403", status)
	}
	if status, _ := me.call(t, "DELETE", base+"/checkout-test", nil); status != 204 {
		t.Errorf("delete = %d, want 204", status)
	}
	if status, _ := me.call(t, "DELETE", base+"/checkout-test", nil); status != 404 {
		t.Errorf("delete again = %d, want 404", status)
	}
}

type variantResult struct {
	Variant        string   `json:"variant"`
	Exposed        int64    `json:"exposed"`
	Converted      int64    `json:"converted"`
	ConversionRate float64  `json:"conversion_rate"`
	IsControl      bool     `json:"is_control"`
	Uplift         *float64 `json:"uplift"`
	ZScore         *float64 `json:"z_score"`
	PValue         *float64 `json:"p_value"`
	Significant    bool     `json:"significant"`
	LiftCILower    *float64 `json:"lift_ci_lower"`
	LiftCIUpper    *float64 `json:"lift_ci_upper"`
	SequentialP    *float64 `json:"sequential_p_value"`
}

type experimentResult struct {
	ControlVariant *string         `json:"control_variant"`
	TotalExposed   int64           `json:"total_exposed"`
	TotalConverted int64           `json:"total_converted"`
	Variants       []variantResult `json:"variants"`
}

// zTest is the pooled two-proportion z-test, written out independently of
// server/stats: z for variant (c1 of n1) against control (c2 of n2), and its
// two-sided p-value from the standard normal.
func zTest(c1, n1, c2, n2 float64) (z, p float64) {
	pooled := (c1 + c2) / (n1 + n2)
	z = (c1/n1 - c2/n2) / math.Sqrt(pooled*(1-pooled)*(1/n1+1/n2))
	return z, math.Erfc(math.Abs(z) / math.Sqrt2)
}

// sequentialLift is the 95% confidence sequence around the relative lift of
// conversion rates and its always-valid p-value (docs/reference/measurement.md,
// Experiment results), written out independently of server/stats and in a
// rearranged but equal form: variant c1 of n1 against control c2 of n2. All
// three are nil when undefined: a control rate of 0, fewer than two users in
// an arm, or a standard error of 0.
func sequentialLift(c1, n1, c2, n2 float64) (lower, upper, p *float64) {
	if c2 == 0 || n1 < 2 || n2 < 2 {
		return nil, nil, nil
	}
	r1, r2 := c1/n1, c2/n2
	ratio := r1 / r2
	// Delta method for r1/r2: Var ≈ Var(r1)/r2² + ratio² Var(r2)/r2².
	se := math.Sqrt((r1*(1-r1)/n1 + ratio*ratio*r2*(1-r2)/n2) / (r2 * r2))
	if se == 0 {
		return nil, nil, nil
	}
	const alpha = 0.05
	total := n1 + n2
	a := math.Log(1 / (alpha * alpha))      // −2 ln α
	x := total * (a + math.Log1p(a)) / 5000 // N ρ²
	half := se * math.Sqrt((x+1)/x*(math.Log(x+1)-2*math.Log(alpha)))
	lo, hi := ratio-1-half, ratio-1+half
	// One over the mixture e-value √(1/(x+1)) exp(x (lift/se)² / (2 (x+1))).
	pv := math.Min(1, math.Exp(0.5*math.Log(x+1)-x*(ratio-1)*(ratio-1)/(se*se)/(2*(x+1))))
	return &lo, &hi, &pv
}

func (me *measEnv) results(t *testing.T, key string) experimentResult {
	t.Helper()
	res, _ := me.resultsFrom(t, key)
	return res
}

// resultsFrom is results with where they came from: their X-Results-Source.
func (me *measEnv) resultsFrom(t *testing.T, key string) (experimentResult, string) {
	t.Helper()
	status, body, resp := me.s.Do(t, apptest.Request{Method: "GET", Path: me.path("/experiments/" + key + "/results"), Bearer: me.token})
	if status != 200 {
		t.Fatalf("results %s = %d %s", key, status, body)
	}
	var raw any
	if err := json.Unmarshal(body, &raw); err != nil {
		t.Fatal(err)
	}
	if field(raw, "experiment", "key") != key {
		t.Errorf("results carry experiment %v", field(raw, "experiment"))
	}
	// The sequential fields are required, null when undefined, never absent.
	variants, _ := field(raw, "variants").([]any)
	for _, v := range variants {
		for _, k := range []string{"lift_ci_lower", "lift_ci_upper", "sequential_p_value"} {
			if _, ok := v.(map[string]any)[k]; !ok {
				t.Errorf("results %s: variant %v lacks %s", key, v, k)
			}
		}
	}
	var out experimentResult
	decode(t, raw, &out)
	source := resp.Header.Get("X-Results-Source")
	if source != "maintained" && source != "recomputed" {
		t.Errorf("results %s: X-Results-Source %q", key, source)
	}
	return out, source
}

func (me *measEnv) experiment(t *testing.T, key, flag, goal string, control any) {
	t.Helper()
	body := map[string]any{"key": key, "name": key, "flag_key": flag, "goal_event_key": goal}
	if control != nil {
		body["control_variant"] = control
	}
	if status, e := me.call(t, "POST", me.path("/experiments"), body); status != 200 {
		t.Fatalf("create experiment %s = %d %v", key, status, e)
	}
}

var approx = cmpopts.EquateApprox(0, 1e-12)

func TestExperimentResults(t *testing.T) {
	t.Parallel()
	me := newMeasEnv(t)
	exposedAt := t0.Add(-2 * time.Hour)

	var imps, events []any
	// Arm A: a1..a10 exposed at t0-2h.
	for _, u := range users("a", 10) {
		imps = append(imps, imp("checkout", u, "A", exposedAt))
	}
	// a5 later sees B: stays in A.
	imps = append(imps, imp("checkout", "a5", "B", exposedAt.Add(30*time.Minute)))
	// a1..a3 and a5 convert after exposure; a4 only before it (ignored).
	for _, u := range []string{"a1", "a2", "a3", "a5"} {
		events = append(events, goal("purchase", u, t0.Add(-time.Hour)))
	}
	events = append(events, goal("purchase", "a4", exposedAt.Add(-time.Hour)))
	// a6 converts on another goal: not this experiment's.
	events = append(events, goal("signup", "a6", t0))
	// Arm B: b1..b20; b1..b12 convert, b13 at the very instant of exposure.
	for _, u := range users("b", 20) {
		imps = append(imps, imp("checkout", u, "B", exposedAt))
	}
	for _, u := range users("b", 12) {
		events = append(events, goal("purchase", u, t0.Add(-30*time.Minute)))
		events = append(events, goal("purchase", u, t0.Add(-20*time.Minute))) // twice: one user
	}
	events = append(events, goal("purchase", "b13", exposedAt))
	// b14 is seen twice in B: one user.
	imps = append(imps, imp("checkout", "b14", "B", exposedAt.Add(time.Minute)))
	// Anonymous impressions and events are excluded.
	for range 7 {
		imps = append(imps, imp("checkout", "", "C", exposedAt))
		events = append(events, goal("purchase", "", t0))
	}
	me.mustPost(t, "/impressions", imps)
	// A later batch with an earlier evaluation: c1 first saw A (before B).
	me.mustPost(t, "/impressions", []any{imp("checkout", "c1", "B", exposedAt.Add(time.Hour))})
	me.mustPost(t, "/impressions", []any{imp("checkout", "c1", "A", exposedAt)})
	me.mustPost(t, "/events", events)

	// A: a1..a10 + c1 = 11 exposed, 4 converted. B: 20 exposed, 13 converted.
	zB, pB := zTest(13, 20, 4, 11)
	loB, hiB, seqB := sequentialLift(13, 20, 4, 11)
	wantAControl := experimentResult{
		ControlVariant: ptrTo("A"), TotalExposed: 31, TotalConverted: 17,
		Variants: []variantResult{
			{Variant: "A", Exposed: 11, Converted: 4, ConversionRate: 4.0 / 11, IsControl: true},
			{Variant: "B", Exposed: 20, Converted: 13, ConversionRate: 13.0 / 20,
				Uplift: ptrTo((13.0/20 - 4.0/11) / (4.0 / 11)), ZScore: &zB, PValue: &pB, Significant: pB < 0.05,
				LiftCILower: loB, LiftCIUpper: hiB, SequentialP: seqB},
		},
	}
	me.experiment(t, "a-control", "checkout", "purchase", "A")
	if d := cmp.Diff(wantAControl, me.results(t, "a-control"), approx); d != "" {
		t.Errorf("control A (-want +got):\n%s", d)
	}

	// A control variant absent from the data: the most exposed arm (B).
	zA, pA := zTest(4, 11, 13, 20)
	loA, hiA, seqA := sequentialLift(4, 11, 13, 20)
	wantBControl := experimentResult{
		ControlVariant: ptrTo("B"), TotalExposed: 31, TotalConverted: 17,
		Variants: []variantResult{
			{Variant: "B", Exposed: 20, Converted: 13, ConversionRate: 13.0 / 20, IsControl: true},
			{Variant: "A", Exposed: 11, Converted: 4, ConversionRate: 4.0 / 11,
				Uplift: ptrTo((4.0/11 - 13.0/20) / (13.0 / 20)), ZScore: &zA, PValue: &pA, Significant: pA < 0.05,
				LiftCILower: loA, LiftCIUpper: hiA, SequentialP: seqA},
		},
	}
	me.experiment(t, "absent-control", "checkout", "purchase", "C") // C is only seen anonymously
	if d := cmp.Diff(wantBControl, me.results(t, "absent-control"), approx); d != "" {
		t.Errorf("absent control (-want +got):\n%s", d)
	}
	me.experiment(t, "no-control", "checkout", "purchase", nil)
	if d := cmp.Diff(wantBControl, me.results(t, "no-control"), approx); d != "" {
		t.Errorf("no control (-want +got):\n%s", d)
	}

	// Changing the goal re-measures: nobody fired "signup" after exposure but a6.
	if status, _ := me.call(t, "PATCH", me.path("/experiments/no-control"), map[string]any{"goal_event_key": "signup", "control_variant": "A"}); status != 200 {
		t.Fatal("patch goal")
	}
	got := me.results(t, "no-control")
	zS, pS := zTest(0, 20, 1, 11)
	// Nobody in B converted, so neither B's rate nor the lift varies: the
	// standard error is 0 and the sequential fields are null.
	if lo, hi, p := sequentialLift(0, 20, 1, 11); lo != nil || hi != nil || p != nil {
		t.Fatalf("sequentialLift(0/20 vs 1/11) = %v %v %v, want undefined", lo, hi, p)
	}
	wantSignup := experimentResult{
		ControlVariant: ptrTo("A"), TotalExposed: 31, TotalConverted: 1,
		Variants: []variantResult{
			{Variant: "A", Exposed: 11, Converted: 1, ConversionRate: 1.0 / 11, IsControl: true},
			{Variant: "B", Exposed: 20, Converted: 0, ConversionRate: 0, Uplift: ptrTo(-1.0), ZScore: &zS, PValue: &pS, Significant: pS < 0.05},
		},
	}
	if d := cmp.Diff(wantSignup, got, approx); d != "" {
		t.Errorf("signup goal (-want +got):\n%s", d)
	}

	// Larger arms with a clear lift: 150 of 300 convert on "on" against 30 of
	// 300 on "off", and the confidence sequence excludes 0.
	var onImps, offImps, bigEvents []any
	for i, u := range users("on", 300) {
		onImps = append(onImps, imp("big", u, "on", exposedAt))
		if i < 150 {
			bigEvents = append(bigEvents, goal("paid", u, t0))
		}
	}
	for i, u := range users("off", 300) {
		offImps = append(offImps, imp("big", u, "off", exposedAt))
		if i < 30 {
			bigEvents = append(bigEvents, goal("paid", u, t0))
		}
	}
	me.mustPost(t, "/impressions", onImps)
	me.mustPost(t, "/impressions", offImps)
	me.mustPost(t, "/events", bigEvents)
	me.experiment(t, "big", "big", "paid", "off")
	zBig, pBig := zTest(150, 300, 30, 300)
	loBig, hiBig, seqBig := sequentialLift(150, 300, 30, 300)
	if loBig == nil || *loBig <= 0 || *seqBig >= 0.05 {
		t.Fatalf("sequentialLift(150/300 vs 30/300) = %v %v %v, want an interval above 0", loBig, hiBig, seqBig)
	}
	wantBig := experimentResult{
		ControlVariant: ptrTo("off"), TotalExposed: 600, TotalConverted: 180,
		Variants: []variantResult{
			{Variant: "off", Exposed: 300, Converted: 30, ConversionRate: 0.1, IsControl: true},
			{Variant: "on", Exposed: 300, Converted: 150, ConversionRate: 0.5, Uplift: ptrTo(4.0),
				ZScore: &zBig, PValue: &pBig, Significant: true, LiftCILower: loBig, LiftCIUpper: hiBig, SequentialP: seqBig},
		},
	}
	if d := cmp.Diff(wantBig, me.results(t, "big"), approx); d != "" {
		t.Errorf("large arms (-want +got):\n%s", d)
	}
}

func TestExperimentResultEdgeCases(t *testing.T) {
	t.Parallel()
	me := newMeasEnv(t)
	at := t0.Add(-time.Hour)
	var imps []any
	// Tie of exposure between "x" and "w": the lowest value is the control.
	for _, u := range users("x", 3) {
		imps = append(imps, imp("tie", u, "x", at))
	}
	for _, u := range users("w", 3) {
		imps = append(imps, imp("tie", u, "w", at))
	}
	for _, u := range users("y", 2) {
		imps = append(imps, imp("tie", u, "y", at))
	}
	me.mustPost(t, "/impressions", imps)

	// Nobody converts: z, p and uplift are undefined (pooled proportion 0).
	me.experiment(t, "tie", "tie", "never", nil)
	want := experimentResult{
		ControlVariant: ptrTo("w"), TotalExposed: 8,
		Variants: []variantResult{
			{Variant: "w", Exposed: 3, IsControl: true},
			{Variant: "x", Exposed: 3},
			{Variant: "y", Exposed: 2},
		},
	}
	if d := cmp.Diff(want, me.results(t, "tie")); d != "" {
		t.Errorf("tie (-want +got):\n%s", d)
	}

	// Everybody converts: pooled proportion 1, z undefined; uplift 0.
	var events []any
	for _, u := range append(append(users("x", 3), users("w", 3)...), users("y", 2)...) {
		events = append(events, goal("always", u, t0))
	}
	me.mustPost(t, "/events", events)
	me.experiment(t, "all", "tie", "always", "y")
	want = experimentResult{
		ControlVariant: ptrTo("y"), TotalExposed: 8, TotalConverted: 8,
		Variants: []variantResult{
			{Variant: "y", Exposed: 2, Converted: 2, ConversionRate: 1, IsControl: true},
			{Variant: "w", Exposed: 3, Converted: 3, ConversionRate: 1, Uplift: ptrTo(0.0)},
			{Variant: "x", Exposed: 3, Converted: 3, ConversionRate: 1, Uplift: ptrTo(0.0)},
		},
	}
	if d := cmp.Diff(want, me.results(t, "all")); d != "" {
		t.Errorf("all convert (-want +got):\n%s", d)
	}

	// No data: control null, no variants.
	me.experiment(t, "empty", "unseen", "never", "on")
	status, raw := me.call(t, "GET", me.path("/experiments/empty/results"), nil)
	if status != 200 || field(raw, "control_variant") != nil || field(raw, "total_exposed") != float64(0) ||
		field(raw, "total_converted") != float64(0) || len(field(raw, "variants").([]any)) != 0 {
		t.Errorf("empty results = %d %v", status, raw)
	}
	// Only anonymous impressions: still no data.
	me.mustPost(t, "/impressions", []any{imp("unseen", "", "on", at)})
	if r := me.results(t, "empty"); r.ControlVariant != nil || len(r.Variants) != 0 {
		t.Errorf("anonymous-only results = %+v", r)
	}
}
