package eval_test

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/switchyard/switchyard/sdkgo/eval"
)

// TestSharedAttributesMatchLikeSeparateRules checks the per-evaluation attribute cache: a flag
// whose rules test the same ten attributes (more than the cache's eight slots) must pick the
// same rule as evaluating each rule alone, as its own flag in which no attribute is shared,
// and taking the first that matches. Attributes are missing, null, listed, unlisted or numbers.
func TestSharedAttributesMatchLikeSeparateRules(t *testing.T) {
	const nAttrs = 10
	ops := []eval.Operator{eval.OpEquals, eval.OpStartsWith, eval.OpNotIn, eval.OpNotContains}
	var rules []eval.Rule
	for k, op := range ops {
		var conds []eval.Condition
		for i := range nAttrs {
			// Rules alternate which attributes they test, so each rule sees a different mix.
			if (i+k)%3 == 0 {
				continue
			}
			conds = append(conds, eval.Condition{Attribute: "a" + strconv.Itoa(i), Operator: op, Values: []string{"x", "1"}})
		}
		rules = append(rules, eval.Rule{Conditions: conds})
	}
	flags := []eval.Flag{{Key: "all", IsEnabled: true, RolloutPercentage: ptr(0), Rules: rules}}
	for k, r := range rules {
		flags = append(flags, eval.Flag{Key: "rule-" + strconv.Itoa(k), IsEnabled: true, RolloutPercentage: ptr(0), Rules: []eval.Rule{r}})
	}
	snap := eval.Compile(flags)

	values := []any{"x", "x", "x", "1", float64(1), "y", "xy", nil, float64(2), true}
	rng := rand.New(rand.NewPCG(1, 16))
	matchedRules := map[int]bool{}
	for n := range 5000 {
		attrs := map[string]any{}
		for i := range nAttrs {
			if j := rng.IntN(len(values) + 1); j < len(values) {
				attrs["a"+strconv.Itoa(i)] = values[j]
			}
		}
		want := -1
		for k := range rules {
			if snap.Evaluate("rule-"+strconv.Itoa(k), "u", attrs).Reason == eval.ReasonRuleMatch {
				want = k
				break
			}
		}
		got := snap.Evaluate("all", "u", attrs)
		if got.RuleIndex != want {
			t.Fatalf("case %d, %v: rule %d matched, want %d", n, attrs, got.RuleIndex, want)
		}
		matchedRules[want] = true
	}
	// The inputs must exercise every rule and the fall-through, or the test proves little.
	for k := -1; k < len(rules); k++ {
		if !matchedRules[k] {
			t.Errorf("no input ended at rule %d", k)
		}
	}
}
