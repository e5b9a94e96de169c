package eval_test

import (
	"math"
	"strconv"
	"testing"

	"github.com/switchyard/switchyard/sdkgo/eval"
)

// propertyUsers returns n fixed user keys, so that statistical tests cannot flake.
func propertyUsers(n int) []string {
	users := make([]string, n)
	for i := range users {
		users[i] = "prop-user-" + strconv.Itoa(i)
	}
	return users
}

// TestRaisingRolloutNeverRemovesUsers checks docs/reference/evaluation.md, Rollout: raising
// the percentage only adds users. Every percentage from 0 to 100, on several flag keys and flag
// types, for 2,000 users: whoever is inside at p is inside at p+1, with the same value.
func TestRaisingRolloutNeverRemovesUsers(t *testing.T) {
	users := propertyUsers(2000)
	flags := []eval.Flag{
		{Key: "monotonic-bool", IsEnabled: true},
		{Key: "monotonic-variants", IsEnabled: true, FlagType: eval.FlagTypeString, DisabledValue: raw(`"off"`),
			Variants: []eval.Variant{{Weight: 6, Value: raw(`"a"`)}, {Weight: 3, Value: raw(`"b"`)}, {Weight: 1, Value: raw(`"c"`)}}},
		{Key: "x", IsEnabled: true},
	}
	for _, base := range flags {
		t.Run(base.Key, func(t *testing.T) {
			prev := make([]eval.Result, len(users))
			inside := 0
			for pct := 0; pct <= 100; pct++ {
				f := base
				f.RolloutPercentage = ptr(pct)
				snap := eval.Compile([]eval.Flag{f})
				count := 0
				for i, u := range users {
					r := snap.Evaluate(f.Key, u, nil)
					in := r.Reason != eval.ReasonRolloutOut
					if in {
						count++
					}
					if pct > 0 && prev[i].Reason != eval.ReasonRolloutOut && r != prev[i] {
						t.Fatalf("user %q: inside at %d%% with %+v, then %+v at %d%%", u, pct-1, prev[i], r, pct)
					}
					prev[i] = r
				}
				if count < inside {
					t.Fatalf("%d users inside at %d%%, fewer than %d before", count, pct, inside)
				}
				inside = count
			}
			if inside != len(users) {
				t.Errorf("%d of %d users inside at 100%%", inside, len(users))
			}
		})
	}
}

// TestVariantWeights631 checks docs/reference/evaluation.md, Variant selection: weights 6/3/1
// split 10,000 users within 2 points of 60/30/10.
func TestVariantWeights631(t *testing.T) {
	users := propertyUsers(10000)
	snap := eval.Compile([]eval.Flag{{
		Key: "weights-631", IsEnabled: true, FlagType: eval.FlagTypeString,
		Variants: []eval.Variant{{Weight: 6, Value: raw(`"six"`)}, {Weight: 3, Value: raw(`"three"`)}, {Weight: 1, Value: raw(`"one"`)}},
	}})
	var counts [3]int
	for _, u := range users {
		r := snap.Evaluate("weights-631", u, nil)
		if r.Reason != eval.ReasonVariant {
			t.Fatalf("user %q: reason %s, want VARIANT", u, r.Reason)
		}
		counts[r.VariantIndex]++
	}
	for i, want := range []float64{0.6, 0.3, 0.1} {
		got := float64(counts[i]) / float64(len(users))
		if math.Abs(got-want) > 0.02 {
			t.Errorf("variant %d: share %.4f, want %.2f ± 0.02 (counts %v)", i, got, want, counts)
		}
	}
}

// TestVariantIndependentOfRollout checks docs/reference/evaluation.md, Buckets: variant
// selection is uncorrelated with the rollout gate. A chi-square test of independence runs on the table
// (inside or outside a 50 % rollout) × (variant), with the variant computed for every user,
// gated or not. The same flag key in two snapshots gives both: one gates at 50 %, the other
// has no rollout, so it shows the variant of users the first keeps out. With 2 degrees of
// freedom the p-value is exactly exp(-χ²/2). The users are fixed, so the test is
// deterministic; p > 0.001 rejects only a real dependence.
func TestVariantIndependentOfRollout(t *testing.T) {
	const key = "independence"
	base := eval.Flag{
		Key: key, IsEnabled: true, FlagType: eval.FlagTypeString,
		Variants: []eval.Variant{{Weight: 6, Value: raw(`"a"`)}, {Weight: 3, Value: raw(`"b"`)}, {Weight: 1, Value: raw(`"c"`)}},
	}
	gated := base
	gated.RolloutPercentage = ptr(50)
	gate := eval.Compile([]eval.Flag{gated})
	all := eval.Compile([]eval.Flag{base})

	users := propertyUsers(20000)
	var table [2][3]float64
	for _, u := range users {
		row := 0
		if gate.Evaluate(key, u, nil).Reason == eval.ReasonRolloutOut {
			row = 1
		}
		v := all.Evaluate(key, u, nil)
		if v.Reason != eval.ReasonVariant {
			t.Fatalf("user %q: reason %s without rollout, want VARIANT", u, v.Reason)
		}
		table[row][v.VariantIndex]++
	}

	var rows [2]float64
	var cols [3]float64
	n := float64(len(users))
	for r := range table {
		for c := range table[r] {
			rows[r] += table[r][c]
			cols[c] += table[r][c]
		}
	}
	chi2 := 0.0
	for r := range table {
		for c := range table[r] {
			expected := rows[r] * cols[c] / n
			d := table[r][c] - expected
			chi2 += d * d / expected
		}
	}
	p := math.Exp(-chi2 / 2) // survival function of χ² with 2 degrees of freedom
	t.Logf("table %v, χ² = %.3f, p = %.4f", table, chi2, p)
	if p <= 0.001 {
		t.Errorf("variant depends on the rollout gate: χ² = %.3f, p = %.6f (table %v)", chi2, p, table)
	}
	if rows[0] < 0.45*n || rows[0] > 0.55*n {
		t.Errorf("%v of %v users inside a 50%% rollout", rows[0], n)
	}
}
