package evalpeers

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/launchdarkly/go-sdk-common/v3/ldcontext"
	"github.com/launchdarkly/go-sdk-common/v3/ldvalue"
	evaluation "github.com/launchdarkly/go-server-sdk-evaluation/v3"
	"github.com/launchdarkly/go-server-sdk-evaluation/v3/ldbuilders"
	"github.com/launchdarkly/go-server-sdk-evaluation/v3/ldmodel"

	"github.com/switchyard/switchyard/sdkgo/eval"
)

// users is the number of distinct users each benchmark rotates over.
const users = 1024

// scenario holds one flag configuration built for both evaluators, and the same users
// prepared for each, so that the timed loops do nothing but look the flag up and evaluate.
type scenario struct {
	name string
	key  string

	snap  *eval.Snapshot
	keys  []string
	attrs []map[string]any

	ld       evaluation.Evaluator
	ldFlags  map[string]*ldmodel.FeatureFlag
	contexts []ldcontext.Context
}

// ldData is LaunchDarkly's DataProvider over a plain map, the shape of its SDK's in-memory
// store.
type ldData map[string]*ldmodel.FeatureFlag

var _ evaluation.DataProvider = ldData(nil)

func (d ldData) GetFeatureFlag(key string) *ldmodel.FeatureFlag { return d[key] }
func (d ldData) GetSegment(string) *ldmodel.Segment             { return nil }

// The attribute values every user carries; scenario (b)'s last rule matches "tier".
var ruleAttrs = []struct {
	name   string
	values [3]string
	user   string
}{
	{"country", [3]string{"US", "CA", "MX"}, "DE"},
	{"plan", [3]string{"free", "trial", "basic"}, "enterprise"},
	{"email", [3]string{"a@example.com", "b@example.com", "c@example.com"}, ""}, // per user
	{"device", [3]string{"ios", "android", "tv"}, "desktop"},
	{"tier", [3]string{"gold", "platinum", "diamond"}, "diamond"},
}

// scenarios builds the three flags of the speed target for both evaluators:
// (a) a boolean flag without rules at 50 % rollout; (b) 5 rules of 3 string values each, the
// last one matching, plus a 50 % rollout; (c) one prerequisite and 3 weighted variants (6/3/1).
// LaunchDarkly expresses a percentage rollout as a weighted fallthrough over the variations
// true/false, a rule as one "in" clause, and a prerequisite as a required variation index.
func scenarios(tb testing.TB) []*scenario {
	keys := make([]string, users)
	attrs := make([]map[string]any, users)
	contexts := make([]ldcontext.Context, users)
	for i := range keys {
		keys[i] = "user-" + strconv.Itoa(i)
		attrs[i] = map[string]any{}
		b := ldcontext.NewBuilder(keys[i])
		for _, a := range ruleAttrs {
			v := a.user
			if a.name == "email" {
				v = keys[i] + "@example.com"
			}
			attrs[i][a.name] = v
			b.SetString(a.name, v)
		}
		contexts[i] = b.Build()
		if err := contexts[i].Err(); err != nil {
			tb.Fatalf("context %d: %v", i, err)
		}
	}

	var ourRules []eval.Rule
	var ldRules []*ldbuilders.RuleBuilder
	for i, a := range ruleAttrs {
		ourRules = append(ourRules, eval.Rule{Attribute: a.name, Operator: eval.OpEquals, Values: a.values[:]})
		ldRules = append(ldRules, ldbuilders.NewRuleBuilder().ID("rule-"+strconv.Itoa(i)).Variation(0).
			Clauses(ldbuilders.Clause(a.name, ldmodel.OperatorIn,
				ldvalue.String(a.values[0]), ldvalue.String(a.values[1]), ldvalue.String(a.values[2]))))
	}
	half := ldbuilders.Rollout(ldbuilders.Bucket(0, 50000), ldbuilders.Bucket(1, 50000))
	boolFlag := func(key string) *ldbuilders.FlagBuilder {
		return ldbuilders.NewFlagBuilder(key).On(true).Salt(key).
			Variations(ldvalue.Bool(true), ldvalue.Bool(false)).OffVariation(1)
	}

	fifty := 50
	rawJSON := func(s string) json.RawMessage { return json.RawMessage(s) }

	a := &scenario{name: "a_bool_rollout50", key: "bool-rollout"}
	a.snap = eval.Compile([]eval.Flag{{Key: a.key, IsEnabled: true, RolloutPercentage: &fifty}})
	a.ldFlags = ldFlags(boolFlag(a.key).Fallthrough(half).Build())

	b := &scenario{name: "b_5rules_last_matches", key: "five-rules"}
	b.snap = eval.Compile([]eval.Flag{{Key: b.key, IsEnabled: true, RolloutPercentage: &fifty, Rules: ourRules}})
	fb := boolFlag(b.key).Fallthrough(half)
	for _, r := range ldRules {
		fb.AddRule(r)
	}
	b.ldFlags = ldFlags(fb.Build())

	c := &scenario{name: "c_prereq_3variants", key: "checkout-layout"}
	c.snap = eval.Compile([]eval.Flag{
		{Key: "checkout-enabled", IsEnabled: true},
		{
			Key: c.key, IsEnabled: true, FlagType: eval.FlagTypeString,
			DefaultValue: rawJSON(`"control"`), DisabledValue: rawJSON(`"off"`),
			Prerequisites: []eval.Prerequisite{{FlagKey: "checkout-enabled"}},
			Variants: []eval.Variant{
				{Weight: 6, Value: rawJSON(`"one-page"`)},
				{Weight: 3, Value: rawJSON(`"two-page"`)},
				{Weight: 1, Value: rawJSON(`"wizard"`)},
			},
		},
	})
	c.ldFlags = ldFlags(
		boolFlag("checkout-enabled").FallthroughVariation(0).Build(),
		ldbuilders.NewFlagBuilder(c.key).On(true).Salt(c.key).
			Variations(ldvalue.String("control"), ldvalue.String("one-page"), ldvalue.String("two-page"),
				ldvalue.String("wizard"), ldvalue.String("off")).
			OffVariation(4).
			AddPrerequisite("checkout-enabled", 0).
			Fallthrough(ldbuilders.Rollout(ldbuilders.Bucket(1, 60000), ldbuilders.Bucket(2, 30000), ldbuilders.Bucket(3, 10000))).
			Build(),
	)

	out := []*scenario{a, b, c}
	for _, s := range out {
		s.keys, s.attrs, s.contexts = keys, attrs, contexts
	}
	out = append(out, targetingScenarios(tb, keys)...)
	for _, s := range out {
		s.ld = evaluation.NewEvaluator(ldData(s.ldFlags))
	}
	return out
}

// targetingScenarios builds the flags of scenarios (d) and (e) of docs/performance.md for both
// evaluators, over
// the same users as (a) to (c) plus a "version" attribute 2.0.3 … 2.11.3 (every one at least
// 2.0.0). sdkgo/eval's own benchmark builds the same two flags.
//
// (d) 3 rules of 3 conditions each: semver_greater_than_or_equal 2.0.0, not_in over 20
// countries and equals on the plan; only the last rule's plan matches, and it admits 30 % of
// its users; the flag's rollout is 0 %. LaunchDarkly writes ≥ as a negated semVerLessThan,
// not_in as a negated in, and the rule rollout as a percentage rollout over true/false on the
// rule, with a fallthrough to false. LaunchDarkly cannot send the users a rule rollout leaves
// out on to the next rule, so with the rollout rule last both give them false: ours through
// the flag's 0 % rollout (ROLLOUT_OUT), LaunchDarkly through the rule's 70 % bucket.
//
// (e) one regex rule on the e-mail address (about 10 % of users match), rollout 0 %;
// LaunchDarkly's matches clause with the same pattern, which it compiles when it
// preprocesses the flag, as we do when we compile ours.
func targetingScenarios(tb testing.TB, keys []string) []*scenario {
	attrs := make([]map[string]any, len(keys))
	contexts := make([]ldcontext.Context, len(keys))
	for i, key := range keys {
		attrs[i] = map[string]any{}
		b := ldcontext.NewBuilder(key)
		for _, a := range ruleAttrs {
			v := a.user
			if a.name == "email" {
				v = key + "@example.com"
			}
			attrs[i][a.name] = v
			b.SetString(a.name, v)
		}
		version := "2." + strconv.Itoa(i%12) + ".3"
		attrs[i]["version"] = version
		b.SetString("version", version)
		contexts[i] = b.Build()
		if err := contexts[i].Err(); err != nil {
			tb.Fatalf("context %d: %v", i, err)
		}
	}

	countries := make([]string, 20)
	ldCountries := make([]ldvalue.Value, len(countries))
	for i := range countries {
		countries[i] = "C" + strconv.Itoa(i)
		ldCountries[i] = ldvalue.String(countries[i])
	}
	zero, thirty := 0, 30
	ourRule := func(plan string, pct *int) eval.Rule {
		return eval.Rule{RolloutPercentage: pct, Conditions: []eval.Condition{
			{Attribute: "version", Operator: eval.OpSemverGreaterThanOrEqual, Values: []string{"2.0.0"}},
			{Attribute: "country", Operator: eval.OpNotIn, Values: countries},
			{Attribute: "plan", Operator: eval.OpEquals, Values: []string{plan}},
		}}
	}
	ldRule := func(i int, plan string) *ldbuilders.RuleBuilder {
		return ldbuilders.NewRuleBuilder().ID("rule-"+strconv.Itoa(i)).Variation(0).Clauses(
			ldbuilders.Negate(ldbuilders.Clause("version", ldmodel.OperatorSemVerLessThan, ldvalue.String("2.0.0"))),
			ldbuilders.Negate(ldbuilders.Clause("country", ldmodel.OperatorIn, ldCountries...)),
			ldbuilders.Clause("plan", ldmodel.OperatorIn, ldvalue.String(plan)),
		)
	}
	boolFlag := func(key string) *ldbuilders.FlagBuilder {
		return ldbuilders.NewFlagBuilder(key).On(true).Salt(key).
			Variations(ldvalue.Bool(true), ldvalue.Bool(false)).OffVariation(1).FallthroughVariation(1)
	}

	d := &scenario{name: "d_3rules_3conditions_rule_rollout30", key: "conditions"}
	d.snap = eval.Compile([]eval.Flag{{Key: d.key, IsEnabled: true, RolloutPercentage: &zero, Rules: []eval.Rule{
		ourRule("free", nil), ourRule("trial", nil), ourRule("enterprise", &thirty),
	}}})
	d.ldFlags = ldFlags(boolFlag(d.key).
		AddRule(ldRule(0, "free")).
		AddRule(ldRule(1, "trial")).
		AddRule(ldRule(2, "enterprise").VariationOrRollout(
			ldbuilders.Rollout(ldbuilders.Bucket(0, 30000), ldbuilders.Bucket(1, 70000)))).
		Build())

	const pattern = `^user-\d*7@example\.com$`
	e := &scenario{name: "e_regex", key: "regex"}
	e.snap = eval.Compile([]eval.Flag{{Key: e.key, IsEnabled: true, RolloutPercentage: &zero, Rules: []eval.Rule{
		{Attribute: "email", Operator: eval.OpRegex, Values: []string{pattern}},
	}}})
	e.ldFlags = ldFlags(boolFlag(e.key).
		AddRule(ldbuilders.NewRuleBuilder().ID("rule-0").Variation(0).Clauses(
			ldbuilders.Clause("email", ldmodel.OperatorMatches, ldvalue.String(pattern)))).
		Build())

	out := []*scenario{d, e}
	for _, s := range out {
		s.keys, s.attrs, s.contexts = keys, attrs, contexts
	}
	return out
}

// ldFlags preprocesses flags as LaunchDarkly's SDK does when they arrive, so that its
// evaluator runs on its fast path too.
func ldFlags(flags ...ldmodel.FeatureFlag) map[string]*ldmodel.FeatureFlag {
	m := make(map[string]*ldmodel.FeatureFlag, len(flags))
	for i := range flags {
		f := flags[i]
		ldmodel.PreprocessFlag(&f)
		m[f.Key] = &f
	}
	return m
}

// evalLD looks the flag up and evaluates it, the same work Snapshot.Evaluate does.
func (s *scenario) evalLD(i int) evaluation.Result {
	return s.ld.Evaluate(s.ldFlags[s.key], s.contexts[i], nil)
}

// BenchmarkEvaluate runs each scenario for both evaluators in one run. The sub-benchmark
// names carry scenario= and evaluator= keys, so `benchstat -col /evaluator` prints the two
// side by side with their ratio.
func BenchmarkEvaluate(b *testing.B) {
	for _, s := range scenarios(b) {
		b.Run("scenario="+s.name+"/evaluator=switchyard", func(b *testing.B) {
			b.ReportAllocs()
			var sink eval.Result
			i := 0
			for b.Loop() {
				sink = s.snap.Evaluate(s.key, s.keys[i], s.attrs[i])
				i = (i + 1) % users
			}
			_ = sink
		})
		b.Run("scenario="+s.name+"/evaluator=launchdarkly", func(b *testing.B) {
			b.ReportAllocs()
			var sink evaluation.Result
			i := 0
			for b.Loop() {
				sink = s.evalLD(i)
				i = (i + 1) % users
			}
			_ = sink
		})
	}
}

// TestScenariosAreEquivalent checks that both evaluators do the same job on every scenario:
// same rule outcome, a rollout near 50 %, variants near 60/30/10. Buckets differ by design
// (LaunchDarkly hashes with SHA-1), so rollout and variant shares are compared, not users.
func TestScenariosAreEquivalent(t *testing.T) {
	for _, s := range scenarios(t) {
		t.Run(s.name, func(t *testing.T) {
			ours := map[string]int{}
			theirs := map[string]int{}
			for i := range users {
				r := s.snap.Evaluate(s.key, s.keys[i], s.attrs[i])
				ours[eval.RenderValue(r.Value)]++
				ld := s.evalLD(i)
				if ld.Detail.Reason.GetErrorKind() != "" {
					t.Fatalf("launchdarkly error: %v", ld.Detail.Reason)
				}
				theirs[eval.RenderValue(ld.Detail.Value.AsArbitraryValue())]++
			}
			values := map[string]bool{}
			for v := range ours {
				values[v] = true
			}
			for v := range theirs {
				values[v] = true
			}
			for v := range values {
				// Both hash uniformly; over 1024 users their shares stay within 6 points.
				if d := ours[v] - theirs[v]; d*100 > 6*users || -d*100 > 6*users {
					t.Errorf("value %s: switchyard %d of %d users, launchdarkly %d", v, ours[v], users, theirs[v])
				}
			}
		})
	}
}

// TestTargetingOutcomesAgree checks (d) and (e) user by user, beyond the value shares of
// TestScenariosAreEquivalent: in (d) every user reaches the last rule on both sides (the first
// two fail on the plan after their version and country conditions held), and only the rule
// rollout decides; in (e), which hashes nothing, both give every user the same value.
func TestTargetingOutcomesAgree(t *testing.T) {
	byName := map[string]*scenario{}
	for _, s := range scenarios(t) {
		byName[s.name] = s
	}
	d, e := byName["d_3rules_3conditions_rule_rollout30"], byName["e_regex"]
	if d == nil || e == nil {
		t.Fatal("scenarios (d) and (e) are missing")
	}

	in := 0
	for i := range users {
		r := d.snap.Evaluate(d.key, d.keys[i], d.attrs[i])
		switch {
		case r.Reason == eval.ReasonRuleMatch && r.RuleIndex == 2 && r.Value == true:
			in++
		case r.Reason == eval.ReasonRolloutOut && r.Value == false:
		default:
			t.Fatalf("(d) user %d: switchyard %+v, want rule 2 or ROLLOUT_OUT", i, r)
		}
		ld := d.evalLD(i)
		if ld.Detail.Reason.GetKind() != "RULE_MATCH" || ld.Detail.Reason.GetRuleIndex() != 2 {
			t.Fatalf("(d) user %d: launchdarkly %v, want a match of rule 2", i, ld.Detail.Reason)
		}
	}
	if in < users*24/100 || in > users*36/100 {
		t.Errorf("(d): %d of %d users inside the 30 %% rule rollout", in, users)
	}

	matched := 0
	for i := range users {
		r := e.snap.Evaluate(e.key, e.keys[i], e.attrs[i])
		ld := e.evalLD(i)
		if ldv := ld.Detail.Value.BoolValue(); r.Value != ldv {
			t.Fatalf("(e) user %d (%s): switchyard %v, launchdarkly %v", i, e.keys[i], r.Value, ldv)
		}
		if r.Reason == eval.ReasonRuleMatch {
			matched++
			if ld.Detail.Reason.GetKind() != "RULE_MATCH" {
				t.Fatalf("(e) user %d: launchdarkly %v, want a rule match", i, ld.Detail.Reason)
			}
		}
	}
	// user-7, user-17, …, user-1017: the keys ending in 7.
	if matched != 102 {
		t.Errorf("(e): %d users match the pattern, want 102", matched)
	}
}
