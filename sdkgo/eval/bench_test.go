package eval_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/switchyard/switchyard/sdkgo/eval"
)

// BenchmarkEvaluate measures the scenarios of the speed targets in docs/performance.md. The
// side-by-side comparison with LaunchDarkly's evaluator is bench/evalpeers.
func BenchmarkEvaluate(b *testing.B) {
	for _, sc := range append(scenarios(), targetingScenarios()...) {
		b.Run(sc.name, func(b *testing.B) {
			b.ReportAllocs()
			var sink eval.Result
			i := 0
			for b.Loop() {
				sink = sc.snap.Evaluate(sc.key, sc.users[i], sc.attrs[i])
				i = (i + 1) % benchUsers
			}
			_ = sink
		})
	}
}

// TestEvaluateDoesNotAllocate proves the "no allocation on the common path" promise outside
// benchmarks: every scenario, and the paths that format or parse attribute values.
func TestEvaluateDoesNotAllocate(t *testing.T) {
	if eval.RaceEnabled {
		t.Skip("-race build: hashing takes the allocating path of murmur_race.go")
	}
	type probe struct {
		name  string
		snap  *eval.Snapshot
		key   string
		users []string
		attrs []map[string]any
	}
	var probes []probe
	for _, sc := range append(scenarios(), targetingScenarios()...) {
		probes = append(probes, probe(sc))
	}

	numeric := eval.Compile([]eval.Flag{{
		Key: "numeric", IsEnabled: true, FlagType: eval.FlagTypeJSON,
		DefaultValue: raw(`{"a":[1,2]}`), RolloutPercentage: ptr(30),
		Rules: []eval.Rule{
			{Attribute: "age", Operator: eval.OpEquals, Values: []string{"17.25"}},
			{Attribute: "age", Operator: eval.OpContains, Values: []string{"99"}},
			{Attribute: "ok", Operator: eval.OpEquals, Values: []string{"maybe"}},
			{Attribute: "age", Operator: eval.OpGreaterThan, Values: []string{"x", "1e9"}},
			{Attribute: "height", Operator: eval.OpLessThanOrEqual, Values: []string{"1.5"}},
			{Attribute: "missing", Operator: eval.OpNotEquals, Values: []string{"a", "b"}},
		},
	}})
	numAttrs := []map[string]any{
		{"age": 41.5, "ok": true, "height": "1.80"},
		{"age": int64(41), "ok": false, "height": 2},
		{"age": uint8(7), "ok": "yes", "height": float32(1.75)},
		{"age": "42", "height": []any{1}},
	}

	chain := []eval.Flag{{Key: "chain-0", IsEnabled: true, FlagType: eval.FlagTypeString, DefaultValue: raw(`"on"`)}}
	for i := 1; i <= 10; i++ {
		chain = append(chain, eval.Flag{
			Key: "chain-" + strconv.Itoa(i), IsEnabled: true,
			Prerequisites: []eval.Prerequisite{{FlagKey: "chain-" + strconv.Itoa(i-1), RequiredValue: raw(`"on"`)}},
		})
	}
	chain = append(chain,
		eval.Flag{Key: "cycle-a", IsEnabled: true, Prerequisites: []eval.Prerequisite{{FlagKey: "cycle-b"}}},
		eval.Flag{Key: "cycle-b", IsEnabled: true, Prerequisites: []eval.Prerequisite{{FlagKey: "cycle-a"}}},
	)
	chainSnap := eval.Compile(chain)

	// Conditions of every set, pattern, version and instant operator
	// (docs/reference/evaluation.md, Operators), rule rollouts and a rule split.
	targeting := eval.Compile([]eval.Flag{{
		Key: "targeting", IsEnabled: true, FlagType: eval.FlagTypeString, DefaultValue: raw(`"default"`),
		RolloutPercentage: ptr(0),
		Rules: []eval.Rule{
			{Attribute: "country", Operator: eval.OpNotIn, Values: []string{"DE", "FR"}, Conditions: []eval.Condition{
				{Attribute: "email", Operator: eval.OpNotContains, Values: []string{"@corp.example"}},
			}},
			{Conditions: []eval.Condition{
				{Attribute: "version", Operator: eval.OpSemverGreaterThanOrEqual, Values: []string{"v2.4.0-rc.1"}},
				{Attribute: "email", Operator: eval.OpRegex, Values: []string{`^[a-z0-9-]+@example\.com$`}},
				{Attribute: "signup", Operator: eval.OpAfter, Values: []string{"2024-03-01T00:00:00Z"}},
				{Attribute: "seen", Operator: eval.OpBefore, Values: []string{"2030-01-01T00:00:00.5+01:00"}},
			}, RolloutPercentage: ptr(50), Variant: raw(`"rolled"`)},
			{Attribute: "plan", Operator: eval.OpEquals, Values: []string{"enterprise"}, Variants: []eval.Variant{
				{Weight: 1, Value: raw(`"a"`)}, {Weight: 0, Value: raw(`"never"`)}, {Weight: 2, Value: raw(`"b"`)},
			}},
		},
	}})
	targetingAttrs := []map[string]any{
		{"country": "DE", "email": "user-1@example.com", "version": "2.4.0", "signup": "2024-05-01T10:00:00.123+02:00", "seen": 1.7e12, "plan": "enterprise"},
		{"country": "US", "email": "user-2@corp.example", "version": "v2.10.1+build.7", "signup": int64(1719000000000), "seen": "1720000000000", "plan": "enterprise"},
		{"country": "DE", "email": "x@example.com", "version": "2.4.0-rc.2", "signup": 1.7195e12, "seen": "2029-12-31T23:59:59.999999999Z", "plan": "free"},
		{"country": 49, "email": true, "version": "not a version", "signup": "yesterday", "seen": nil, "plan": "enterprise"},
	}

	users := scenarios()[0].users
	for i, a := range targetingAttrs {
		probes = append(probes, probe{name: "targeting attributes " + strconv.Itoa(i), snap: targeting, key: "targeting", users: users, attrs: []map[string]any{a}})
	}
	for i, a := range numAttrs {
		probes = append(probes, probe{name: "numeric attributes " + strconv.Itoa(i), snap: numeric, key: "numeric", users: users, attrs: []map[string]any{a}})
	}
	probes = append(probes,
		probe{name: "10-hop prerequisite chain", snap: chainSnap, key: "chain-10", users: users, attrs: []map[string]any{nil}},
		probe{name: "cycle", snap: chainSnap, key: "cycle-a", users: users, attrs: []map[string]any{nil}},
		probe{name: "flag not found", snap: chainSnap, key: "nope", users: users, attrs: []map[string]any{nil}},
		probe{name: "anonymous user", snap: scenarios()[0].snap, key: "bool-rollout", users: []string{""}, attrs: []map[string]any{nil}},
		// 200 characters of user key still fit the stack buffer with a 100-character flag key.
		probe{name: "long user key", snap: scenarios()[2].snap, key: "checkout-layout", users: []string{strings.Repeat("u", 200)}, attrs: []map[string]any{nil}},
	)

	for _, p := range probes {
		t.Run(p.name, func(t *testing.T) {
			i := 0
			allocs := testing.AllocsPerRun(2000, func() {
				p.snap.Evaluate(p.key, p.users[i%len(p.users)], p.attrs[i%len(p.attrs)])
				i++
			})
			if allocs != 0 {
				t.Errorf("Evaluate allocates %v times per call, want 0", allocs)
			}
		})
	}
}
