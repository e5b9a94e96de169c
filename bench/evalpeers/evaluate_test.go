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
		s.ld = evaluation.NewEvaluator(ldData(s.ldFlags))
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
