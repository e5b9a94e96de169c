package eval_test

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard/switchyard/sdkgo/eval"
)

// TestRuleJSONExtensions checks the wire form of docs/reference/evaluation.md, Wire form: the
// rule fields conditions, rollout_percentage and variants round-trip, and a rule written
// without them encodes without them (absent, not null or []), with variants: [] coming back
// absent.
func TestRuleJSONExtensions(t *testing.T) {
	t.Run("new fields round-trip", func(t *testing.T) {
		in := `{"attribute":"plan","operator":"equals","values":["pro"],` +
			`"conditions":[{"attribute":"version","operator":"semver_greater_than_or_equal","values":["2.4.0"]},` +
			`{"attribute":"country","operator":"not_in","values":["US","CA"]}],` +
			`"rollout_percentage":30,"variants":[{"weight":1,"value":"a"},{"weight":0,"value":{"x": 1}}]}`
		var first eval.Flag
		if err := json.Unmarshal([]byte(`{"key":"k","flag_type":"string","rules":[`+in+`]}`), &first); err != nil {
			t.Fatalf("decode: %v", err)
		}
		r := first.Rules[0]
		out, err := json.Marshal(first)
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		var got struct {
			Rules []json.RawMessage `json:"rules"`
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("decode output: %v", err)
		}
		if diff := cmp.Diff(decodeAny(t, []byte(in)), decodeAny(t, got.Rules[0])); diff != "" {
			t.Errorf("rule changed in a round trip (-in +out):\n%s", diff)
		}
		var f eval.Flag
		if err := json.Unmarshal(out, &f); err != nil {
			t.Fatalf("decode again: %v", err)
		}
		if diff := cmp.Diff(r, f.Rules[0]); diff != "" {
			t.Errorf("second round trip changed the rule (-first +second):\n%s", diff)
		}
	})

	t.Run("rules without the new fields encode as before", func(t *testing.T) {
		tests := []struct{ in, want string }{
			{`{"attribute":"plan","operator":"equals","values":["pro"]}`, `{"attribute":"plan","operator":"equals","values":["pro"]}`},
			{`{"attribute":"plan","operator":"equals","values":["pro"],"variant":"x"}`, `{"attribute":"plan","operator":"equals","values":["pro"],"variant":"x"}`},
			{`{"segment_key":"beta"}`, `{"values":[],"segment_key":"beta"}`},
			{`{"attribute":"a","operator":"equals","values":["1"],"conditions":[],"variants":[],"rollout_percentage":null}`, `{"attribute":"a","operator":"equals","values":["1"]}`},
			{`{"attribute":"a","operator":"equals","values":["1"],"conditions":null,"variants":null}`, `{"attribute":"a","operator":"equals","values":["1"]}`},
		}
		for _, tt := range tests {
			var f eval.Flag
			if err := json.Unmarshal([]byte(`{"key":"k","rules":[`+tt.in+`]}`), &f); err != nil {
				t.Fatalf("decode %s: %v", tt.in, err)
			}
			out, err := json.Marshal(f)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			start := strings.Index(string(out), `"rules":[`) + len(`"rules":[`)
			end := strings.Index(string(out), `],"flag_type"`)
			if got := string(out[start:end]); got != tt.want {
				t.Errorf("rule %s encodes as %s, want %s", tt.in, got, tt.want)
			}
		}
	})

	t.Run("a condition without values encodes values as []", func(t *testing.T) {
		out, err := json.Marshal(eval.Flag{Key: "k", Rules: []eval.Rule{{Conditions: []eval.Condition{{Attribute: "a", Operator: eval.OpNotIn}}}}})
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		if !strings.Contains(string(out), `"conditions":[{"attribute":"a","operator":"not_in","values":[]}]`) {
			t.Errorf("encoded %s", out)
		}
	})
}

// TestSnapshotKeepsItsOwnRuleCopy checks that the new rule fields are deep-copied: a caller
// changing its flag after Compile changes nothing in the snapshot.
func TestSnapshotKeepsItsOwnRuleCopy(t *testing.T) {
	f := eval.Flag{Key: "k", IsEnabled: true, FlagType: eval.FlagTypeString, RolloutPercentage: ptr(0), Rules: []eval.Rule{{
		Conditions:        []eval.Condition{{Attribute: "plan", Operator: eval.OpEquals, Values: []string{"pro"}}},
		RolloutPercentage: ptr(100),
		Variants:          []eval.Variant{{Weight: 1, Value: raw(`"a"`)}},
	}}}
	snap := eval.Compile([]eval.Flag{f})
	f.Rules[0].Conditions[0].Values[0] = "free"
	*f.Rules[0].RolloutPercentage = 0
	f.Rules[0].Variants[0].Value[1] = 'b'
	if got := snap.Evaluate("k", "u", map[string]any{"plan": "pro"}); got.Value != "a" {
		t.Errorf("Evaluate after the caller changed its flag = %+v, want a", got)
	}
	g, _ := snap.Flag("k")
	if g.Rules[0].Conditions[0].Values[0] != "pro" || *g.Rules[0].RolloutPercentage != 100 || string(g.Rules[0].Variants[0].Value) != `"a"` {
		t.Errorf("Snapshot.Flag shares memory with the caller: %+v", g.Rules[0])
	}
}

// condHolds evaluates a single condition through a boolean flag at rollout 0, where only a
// rule match gives true.
func condHolds(t *testing.T, op eval.Operator, values []string, attrs map[string]any) bool {
	t.Helper()
	snap := eval.Compile([]eval.Flag{{
		Key: "f", IsEnabled: true, RolloutPercentage: ptr(0),
		Rules: []eval.Rule{{Conditions: []eval.Condition{{Attribute: "a", Operator: op, Values: values}}}},
	}})
	return snap.Evaluate("f", "u", attrs).Reason == eval.ReasonRuleMatch
}

// TestNewOperators is a table of the set, pattern, version and instant operators
// (docs/reference/evaluation.md, Operators) against Go attribute
// types the JSON vectors cannot express (ints, float32, json.Number) and the edges of each.
func TestNewOperators(t *testing.T) {
	tests := []struct {
		name   string
		op     eval.Operator
		values []string
		attr   any
		want   bool
	}{
		{"not_in: none equal", eval.OpNotIn, []string{"US", "CA"}, "FR", true},
		{"not_in: one equal", eval.OpNotIn, []string{"US", "CA"}, "CA", false},
		{"not_in: number text form", eval.OpNotIn, []string{"30"}, 30, false},
		{"not_in: bool text form", eval.OpNotIn, []string{"true"}, true, false},
		{"not_in: map attribute never matches", eval.OpNotIn, []string{"x"}, map[string]any{}, false},
		{"not_contains: none inside", eval.OpNotContains, []string{"@corp", "admin"}, "a@example.com", true},
		{"not_contains: one inside", eval.OpNotContains, []string{"@corp", "admin"}, "admin@x.io", false},
		{"not_contains: empty value is inside everything", eval.OpNotContains, []string{""}, "x", false},
		{"regex: anywhere", eval.OpRegex, []string{"b+"}, "abbbc", true},
		{"regex: anchored", eval.OpRegex, []string{"^b+$"}, "abbbc", false},
		{"regex: any of the values", eval.OpRegex, []string{"^x", "c$"}, "abbbc", true},
		{"regex: number text form", eval.OpRegex, []string{`^1000000000000000000000$`}, 1e21, true},
		{"regex: int text form", eval.OpRegex, []string{`^-?\d+$`}, int64(-42), true},
		{"regex: bool text form", eval.OpRegex, []string{`^tr`}, true, true},
		{"regex: invalid pattern never matches", eval.OpRegex, []string{"(", "x"}, "x", false},
		{"regex: Perl lookahead is not RE2", eval.OpRegex, []string{"a(?=b)"}, "ab", false},
		{"semver_equals: build metadata ignored", eval.OpSemverEquals, []string{"1.2.3+a"}, "1.2.3+b", true},
		{"semver_equals: v prefix on both", eval.OpSemverEquals, []string{"v1.2.3"}, "v1.2.3", true},
		{"semver_equals: V is no prefix", eval.OpSemverEquals, []string{"1.2.3"}, "V1.2.3", false},
		{"semver_equals: two v", eval.OpSemverEquals, []string{"1.2.3"}, "vv1.2.3", false},
		{"semver_equals: whitespace", eval.OpSemverEquals, []string{"1.2.3"}, " 1.2.3", false},
		{"semver_equals: partial", eval.OpSemverEquals, []string{"1.2.0"}, "1.2", false},
		{"semver_equals: leading zero", eval.OpSemverEquals, []string{"1.2.3"}, "01.2.3", false},
		{"semver_equals: number attribute is no version", eval.OpSemverEquals, []string{"1.0.0"}, 1, false},
		{"semver_greater_than: pre-release below release", eval.OpSemverGreaterThan, []string{"1.0.0-rc.1"}, "1.0.0", true},
		{"semver_less_than: numeric identifiers numerically", eval.OpSemverLessThan, []string{"1.0.0-alpha.10"}, "1.0.0-alpha.9", true},
		{"semver_less_than: numeric before alphanumeric", eval.OpSemverLessThan, []string{"1.0.0-alpha.beta"}, "1.0.0-alpha.1", true},
		{"semver_less_than: fewer identifiers first", eval.OpSemverLessThan, []string{"1.0.0-alpha.1"}, "1.0.0-alpha", true},
		{"semver_less_than: huge numeric pre-release compared exactly", eval.OpSemverLessThan, []string{"1.0.0-9007199254740993"}, "1.0.0-9007199254740992", true},
		{"semver_greater_than: huge pre-release beyond 64 bits", eval.OpSemverGreaterThan, []string{"1.0.0-99999999999999999999"}, "1.0.0-100000000000000000000", true},
		{"semver_greater_than_or_equal: 2^53-1 major is a version", eval.OpSemverGreaterThanOrEqual, []string{"1.0.0"}, "9007199254740991.0.0", true},
		{"semver_greater_than_or_equal: 2^53 major is none", eval.OpSemverGreaterThanOrEqual, []string{"1.0.0"}, "9007199254740992.0.0", false},
		{"semver_less_than_or_equal: equal", eval.OpSemverLessThanOrEqual, []string{"2.0.0"}, "2.0.0", true},
		{"semver: invalid rule value never matches", eval.OpSemverGreaterThan, []string{"1.0", "0.0.1"}, "1.0.0", false},
		{"semver: empty pre-release identifier", eval.OpSemverEquals, []string{"1.0.0"}, "1.0.0-", false},
		{"semver: empty build", eval.OpSemverEquals, []string{"1.0.0"}, "1.0.0+", false},
		{"semver: leading zero pre-release", eval.OpSemverEquals, []string{"1.0.0-1"}, "1.0.0-01", false},
		{"semver: leading zero build allowed", eval.OpSemverEquals, []string{"1.0.0"}, "1.0.0+01", true},
		{"before: RFC 3339", eval.OpBefore, []string{"2024-03-01T00:00:00Z"}, "2024-02-29T23:59:59.999999999Z", true},
		{"before: equal is not before", eval.OpBefore, []string{"2024-03-01T00:00:00Z"}, "2024-03-01T01:00:00+01:00", false},
		{"after: offset", eval.OpAfter, []string{"2024-03-01T00:00:00Z"}, "2024-03-01T00:30:00-00:30", true},
		{"after: int epoch milliseconds", eval.OpAfter, []string{"2024-03-01T00:00:00Z"}, int64(1709251200001), true},
		{"after: uint8 epoch milliseconds", eval.OpAfter, []string{"0"}, uint8(1), true},
		{"after: float32 epoch milliseconds", eval.OpAfter, []string{"0"}, float32(0.5), true},
		{"after: json.Number epoch milliseconds", eval.OpAfter, []string{"1000"}, json.Number("1000.5"), true},
		{"after: 1000.000001 ms is exactly 1000 ms and 0.99999999747 ns, truncated to 0 ns", eval.OpAfter, []string{"1000"}, 1000.000001, false},
		{"after: 1000.000002 ms is 1000 ms and 1 ns after truncation", eval.OpAfter, []string{"1000"}, 1000.000002, true},
		{"after: fraction below a nanosecond truncates", eval.OpAfter, []string{"1000"}, 1000.0000001, false},
		{"before: negative fraction truncates toward zero", eval.OpBefore, []string{"1969-12-31T23:59:59.999999999Z"}, -0.0000009, false},
		{"before: negative epoch", eval.OpBefore, []string{"0"}, -1.0, true},
		{"before: digit string epoch", eval.OpBefore, []string{"1709251200000"}, "1709251199999", true},
		{"before: leading zeros in digits", eval.OpBefore, []string{"0002"}, "-0001", true},
		{"before: lowercase t is no instant", eval.OpBefore, []string{"9999-01-01T00:00:00Z"}, "2024-01-01t00:00:00Z", false},
		{"before: date alone is no instant", eval.OpBefore, []string{"9999-01-01T00:00:00Z"}, "2024-01-01", false},
		{"before: leap second is no instant", eval.OpBefore, []string{"9999-01-01T00:00:00Z"}, "2016-12-31T23:59:60Z", false},
		{"before: ten fraction digits is no instant", eval.OpBefore, []string{"9999-01-01T00:00:00Z"}, "2024-01-01T00:00:00.1234567890Z", false},
		{"before: 30 February is no instant", eval.OpBefore, []string{"9999-01-01T00:00:00Z"}, "2023-02-29T00:00:00Z", false},
		{"before: 29 February 2000", eval.OpBefore, []string{"9999-01-01T00:00:00Z"}, "2000-02-29T00:00:00Z", true},
		{"before: offset hour 24 is no instant", eval.OpBefore, []string{"9999-01-01T00:00:00Z"}, "2024-01-01T00:00:00+24:00", false},
		{"before: year 0000", eval.OpBefore, []string{"1970-01-01T00:00:00Z"}, "0000-01-01T00:00:00Z", true},
		{"before: before year 0000 in UTC is no instant", eval.OpBefore, []string{"1970-01-01T00:00:00Z"}, "0000-01-01T00:00:00+00:01", false},
		{"before: epoch after year 9999 is no instant", eval.OpAfter, []string{"0"}, 253402300800000.0, false},
		{"before: bool is no instant", eval.OpBefore, []string{"9999-01-01T00:00:00Z"}, true, false},
		{"before: NaN is no instant", eval.OpBefore, []string{"9999-01-01T00:00:00Z"}, math.NaN(), false},
		{"after: invalid rule value never matches", eval.OpAfter, []string{"yesterday", "0"}, 5, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := condHolds(t, tt.op, tt.values, map[string]any{"a": tt.attr}); got != tt.want {
				t.Errorf("%s %q against %#v: match %v, want %v", tt.op, tt.values, tt.attr, got, tt.want)
			}
		})
	}
}

// TestMissingAttribute checks docs/reference/evaluation.md, Missing attributes: a missing or
// null attribute satisfies
// not_equals, not_in and not_contains and fails every other operator.
func TestMissingAttribute(t *testing.T) {
	ops := map[eval.Operator]bool{
		eval.OpEquals: false, eval.OpNotEquals: true, eval.OpContains: false, eval.OpStartsWith: false,
		eval.OpEndsWith: false, eval.OpGreaterThan: false, eval.OpGreaterThanOrEqual: false, eval.OpLessThan: false,
		eval.OpLessThanOrEqual: false, eval.OpNotIn: true, eval.OpNotContains: true, eval.OpRegex: false,
		eval.OpSemverEquals: false, eval.OpSemverGreaterThan: false, eval.OpSemverGreaterThanOrEqual: false,
		eval.OpSemverLessThan: false, eval.OpSemverLessThanOrEqual: false, eval.OpBefore: false, eval.OpAfter: false,
		"unknown": false,
	}
	values := map[eval.Operator][]string{eval.OpBefore: {"0"}, eval.OpAfter: {"0"}}
	for op, want := range ops {
		vs := values[op]
		if vs == nil {
			vs = []string{"1.0.0"}
		}
		for _, attrs := range []map[string]any{nil, {"a": nil}, {"b": "1.0.0"}} {
			if got := condHolds(t, op, vs, attrs); got != want {
				t.Errorf("%s with attributes %v: match %v, want %v", op, attrs, got, want)
			}
		}
	}
}

// TestConditionsAreANDed checks that every condition, the top-level one included, must hold,
// and that a rule without any condition never matches.
func TestConditionsAreANDed(t *testing.T) {
	snap := eval.Compile([]eval.Flag{
		{Key: "and", IsEnabled: true, RolloutPercentage: ptr(0), Rules: []eval.Rule{{
			Attribute: "country", Operator: eval.OpEquals, Values: []string{"DE"},
			Conditions: []eval.Condition{
				{Attribute: "plan", Operator: eval.OpEquals, Values: []string{"enterprise"}},
				{Attribute: "version", Operator: eval.OpSemverGreaterThanOrEqual, Values: []string{"2.4.0"}},
			},
		}}},
		{Key: "none", IsEnabled: true, RolloutPercentage: ptr(0), Rules: []eval.Rule{{Operator: eval.OpNotEquals, Values: []string{"x"}}}},
		{Key: "segment-only", IsEnabled: true, RolloutPercentage: ptr(0), Rules: []eval.Rule{{SegmentKey: ptr("beta")}}},
	})
	tests := []struct {
		key   string
		attrs map[string]any
		want  bool
	}{
		{"and", map[string]any{"country": "DE", "plan": "enterprise", "version": "2.4.0"}, true},
		{"and", map[string]any{"country": "FR", "plan": "enterprise", "version": "2.4.0"}, false},
		{"and", map[string]any{"country": "DE", "plan": "free", "version": "2.4.0"}, false},
		{"and", map[string]any{"country": "DE", "plan": "enterprise", "version": "2.4.0-rc.1"}, false},
		{"and", map[string]any{"country": "DE", "plan": "enterprise"}, false},
		{"none", map[string]any{}, false},
		{"segment-only", map[string]any{}, false},
	}
	for _, tt := range tests {
		if got := snap.Evaluate(tt.key, "u", tt.attrs).Reason == eval.ReasonRuleMatch; got != tt.want {
			t.Errorf("%s with %v: match %v, want %v", tt.key, tt.attrs, got, tt.want)
		}
	}
}

// TestRuleRolloutAndSplit checks per-rule rollout_percentage and variants
// (docs/reference/evaluation.md, Per-rule rollout and Per-rule split):
// users left out by a rule's rollout go on to the next rule, raising it only adds users, a
// split uses the flag's variant bucket, zero weights are never chosen, and W = 0 returns what
// the rule would return without variants.
func TestRuleRolloutAndSplit(t *testing.T) {
	users := propertyUsers(1000)
	base := eval.Flag{
		Key: "exp", IsEnabled: true, FlagType: eval.FlagTypeString, DefaultValue: raw(`"default"`),
		DisabledValue: raw(`"off"`), RolloutPercentage: ptr(0),
		Variants: []eval.Variant{{Weight: 1, Value: raw(`"x"`)}, {Weight: 1, Value: raw(`"y"`)}},
	}
	inRule := func(pct int) []bool {
		f := base
		f.Rules = []eval.Rule{
			{Attribute: "plan", Operator: eval.OpEquals, Values: []string{"pro"}, RolloutPercentage: ptr(pct), Variant: raw(`"first"`)},
			{Attribute: "plan", Operator: eval.OpEquals, Values: []string{"pro"}, Variant: raw(`"second"`)},
		}
		snap := eval.Compile([]eval.Flag{f})
		out := make([]bool, len(users))
		for i, u := range users {
			r := snap.Evaluate("exp", u, map[string]any{"plan": "pro"})
			switch r.Value {
			case "first":
				out[i] = true
			case "second":
			default:
				t.Fatalf("rollout %d: user %s got %+v", pct, u, r)
			}
		}
		return out
	}
	prev := inRule(0)
	for i := range prev {
		if prev[i] {
			t.Fatalf("rule rollout 0 admitted %s", users[i])
		}
	}
	for pct := 10; pct <= 100; pct += 10 {
		cur := inRule(pct)
		n := 0
		for i := range cur {
			if prev[i] && !cur[i] {
				t.Fatalf("user %s inside the rule at %d%% but not at %d%%", users[i], pct-10, pct)
			}
			if cur[i] {
				n++
			}
		}
		if pct == 100 && n != len(users) {
			t.Fatalf("rule rollout 100 admitted %d of %d", n, len(users))
		}
		if pct == 50 && (n < 400 || n > 600) {
			t.Errorf("rule rollout 50 admitted %d of %d", n, len(users))
		}
		prev = cur
	}

	// A split inside the rule picks with the flag's variant bucket: the same arm as the
	// flag's own variants of the same weights at 100 % rollout.
	split := base
	split.Rules = []eval.Rule{{Attribute: "plan", Operator: eval.OpEquals, Values: []string{"pro"},
		Variants: []eval.Variant{{Weight: 0, Value: raw(`"never"`)}, {Weight: 1, Value: raw(`"x"`)}, {Weight: 0, Value: raw(`"never"`)}, {Weight: 1, Value: raw(`"y"`)}}}}
	zero := base
	zero.Key = "zero"
	zero.Rules = []eval.Rule{{Attribute: "plan", Operator: eval.OpEquals, Values: []string{"pro"},
		Variants: []eval.Variant{{Weight: 0, Value: raw(`"never"`)}}}}
	boolean := eval.Flag{Key: "bool", IsEnabled: true, RolloutPercentage: ptr(0), Rules: []eval.Rule{{Attribute: "plan", Operator: eval.OpEquals, Values: []string{"pro"},
		Variants: []eval.Variant{{Weight: 1, Value: raw(`false`)}}}}}
	flagOnly := base
	flagOnly.RolloutPercentage = nil
	snap := eval.Compile([]eval.Flag{split, zero, boolean})
	ref := eval.Compile([]eval.Flag{flagOnly})
	for _, u := range users[:200] {
		got := snap.Evaluate("exp", u, map[string]any{"plan": "pro"})
		want := ref.Evaluate("exp", u, nil)
		if got.Value != want.Value || got.Reason != eval.ReasonRuleMatch || got.RuleIndex != 0 || (got.VariantIndex != 1 && got.VariantIndex != 3) {
			t.Fatalf("split for %s = %+v, flag variants give %+v", u, got, want)
		}
		if r := snap.Evaluate("zero", u, map[string]any{"plan": "pro"}); r.Value != "default" || r.Reason != eval.ReasonRuleMatch || r.VariantIndex != -1 {
			t.Fatalf("all-zero split for %s = %+v, want the default value", u, r)
		}
		if r := snap.Evaluate("bool", u, map[string]any{"plan": "pro"}); r.Value != true {
			t.Fatalf("boolean flag rule with variants for %s = %+v, want true", u, r)
		}
	}
}

// TestCheckValue checks the write-time validation the server will share with the evaluator.
func TestCheckValue(t *testing.T) {
	tests := []struct {
		op    eval.Operator
		value string
		ok    bool
	}{
		{eval.OpRegex, "^a+$", true},
		{eval.OpRegex, "(", false},
		{eval.OpSemverEquals, "v1.2.3-rc.1+build.5", true},
		{eval.OpSemverLessThan, "1.2", false},
		{eval.OpBefore, "2024-01-01T00:00:00.5+05:30", true},
		{eval.OpAfter, "-1", true},
		{eval.OpAfter, "2024-01-01 00:00:00Z", false},
		{eval.OpEquals, "(", true},
		{eval.OpNotIn, "", true},
	}
	for _, tt := range tests {
		err := eval.CheckValue(tt.op, tt.value)
		if (err == nil) != tt.ok || (err != nil && !errors.Is(err, eval.ErrInvalidValue)) {
			t.Errorf("CheckValue(%s, %q) = %v, want ok %v", tt.op, tt.value, err, tt.ok)
		}
	}
}
