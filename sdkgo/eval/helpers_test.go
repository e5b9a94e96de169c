package eval_test

import (
	"encoding/json"
	"strconv"

	"github.com/switchyard/switchyard/sdkgo/eval"
)

func ptr[T any](v T) *T { return &v }

func raw(s string) json.RawMessage { return json.RawMessage(s) }

// benchUsers is the number of distinct users the benchmarks and allocation tests rotate over,
// so that one hot user key does not flatter the hash or the branch predictor.
const benchUsers = 1024

// scenario is one of the flags (a) to (c) of the speed targets in docs/performance.md, with
// pre-built users, so that nothing but the evaluation runs inside a timed loop.
type scenario struct {
	name  string
	snap  *eval.Snapshot
	key   string
	users []string
	attrs []map[string]any
}

// scenarios returns (a) a boolean flag without rules at 50 % rollout, (b) a flag with 5 rules
// of 3 string values each where the last rule matches, plus rollout, and (c) a flag with one
// prerequisite and 3 weighted variants. bench/evalpeers builds the same flags for the
// comparison with LaunchDarkly's evaluator.
func scenarios() []scenario {
	users := make([]string, benchUsers)
	attrs := make([]map[string]any, benchUsers)
	for i := range users {
		users[i] = "user-" + strconv.Itoa(i)
		attrs[i] = map[string]any{
			"country": "DE",
			"plan":    "enterprise",
			"email":   users[i] + "@example.com",
			"device":  "desktop",
			"tier":    "diamond",
		}
	}
	rules := []eval.Rule{
		{Attribute: "country", Operator: eval.OpEquals, Values: []string{"US", "CA", "MX"}},
		{Attribute: "plan", Operator: eval.OpEquals, Values: []string{"free", "trial", "basic"}},
		{Attribute: "email", Operator: eval.OpEquals, Values: []string{"a@example.com", "b@example.com", "c@example.com"}},
		{Attribute: "device", Operator: eval.OpEquals, Values: []string{"ios", "android", "tv"}},
		{Attribute: "tier", Operator: eval.OpEquals, Values: []string{"gold", "platinum", "diamond"}},
	}
	return []scenario{
		{
			name: "a_bool_rollout50",
			snap: eval.Compile([]eval.Flag{{Key: "bool-rollout", IsEnabled: true, RolloutPercentage: ptr(50)}}),
			key:  "bool-rollout", users: users, attrs: attrs,
		},
		{
			name: "b_5rules_last_matches",
			snap: eval.Compile([]eval.Flag{{Key: "five-rules", IsEnabled: true, RolloutPercentage: ptr(50), Rules: rules}}),
			key:  "five-rules", users: users, attrs: attrs,
		},
		{
			name: "c_prereq_3variants",
			snap: eval.Compile([]eval.Flag{
				{Key: "checkout-enabled", IsEnabled: true},
				{
					Key: "checkout-layout", IsEnabled: true, FlagType: eval.FlagTypeString,
					DefaultValue: raw(`"control"`), DisabledValue: raw(`"off"`),
					Prerequisites: []eval.Prerequisite{{FlagKey: "checkout-enabled"}},
					Variants: []eval.Variant{
						{Weight: 6, Value: raw(`"one-page"`)},
						{Weight: 3, Value: raw(`"two-page"`)},
						{Weight: 1, Value: raw(`"wizard"`)},
					},
				},
			}),
			key: "checkout-layout", users: users, attrs: attrs,
		},
	}
}

// targetingScenarios returns the targeting scenarios of docs/performance.md: (d) 3 rules of 3
// conditions each (semver_greater_than_or_equal, not_in over 20 values, equals), the last
// matching under a 30 % rule rollout, the flag's own rollout at 0 %; and a regex rule.
func targetingScenarios() []scenario {
	base := scenarios()[0]
	attrs := make([]map[string]any, len(base.attrs))
	for i, a := range base.attrs {
		b := make(map[string]any, len(a)+1)
		for k, v := range a {
			b[k] = v
		}
		b["version"] = "2." + strconv.Itoa(i%12) + ".3"
		attrs[i] = b
	}
	countries := make([]string, 20)
	for i := range countries {
		countries[i] = "C" + strconv.Itoa(i)
	}
	rule := func(minVersion, plan string, pct *int) eval.Rule {
		return eval.Rule{RolloutPercentage: pct, Conditions: []eval.Condition{
			{Attribute: "version", Operator: eval.OpSemverGreaterThanOrEqual, Values: []string{minVersion}},
			{Attribute: "country", Operator: eval.OpNotIn, Values: countries},
			{Attribute: "plan", Operator: eval.OpEquals, Values: []string{plan}},
		}}
	}
	return []scenario{
		{
			name: "d_3rules_3conditions_rule_rollout30",
			snap: eval.Compile([]eval.Flag{{Key: "conditions", IsEnabled: true, RolloutPercentage: ptr(0), Rules: []eval.Rule{
				rule("2.0.0", "free", nil), rule("2.0.0", "trial", nil), rule("2.0.0", "enterprise", ptr(30)),
			}}}),
			key: "conditions", users: base.users, attrs: attrs,
		},
		{
			name: "e_regex",
			snap: eval.Compile([]eval.Flag{{Key: "regex", IsEnabled: true, RolloutPercentage: ptr(0), Rules: []eval.Rule{
				{Attribute: "email", Operator: eval.OpRegex, Values: []string{`^user-\d*7@example\.com$`}},
			}}}),
			key: "regex", users: base.users, attrs: attrs,
		},
	}
}
