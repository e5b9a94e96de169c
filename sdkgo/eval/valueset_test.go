package eval_test

import (
	"strconv"
	"testing"

	"github.com/switchyard/switchyard/sdkgo/eval"
)

// TestLongValueListsMatchLikeShortOnes checks that equals and not_in give the same answers
// whether the rule lists few values (compared in turn) or many (looked up in a set built at
// compile time): every list length from 1 to 30, for a listed value, the last one, an unlisted
// one, a prefix of a listed one, a number written like a listed value, and a missing attribute.
func TestLongValueListsMatchLikeShortOnes(t *testing.T) {
	for n := 1; n <= 30; n++ {
		values := make([]string, n)
		for i := range values {
			values[i] = strconv.Itoa(100 + i)
		}
		snap := eval.Compile([]eval.Flag{
			{Key: "eq", IsEnabled: true, RolloutPercentage: ptr(0), Rules: []eval.Rule{{Attribute: "a", Operator: eval.OpEquals, Values: values}}},
			{Key: "notin", IsEnabled: true, RolloutPercentage: ptr(0), Rules: []eval.Rule{{Attribute: "a", Operator: eval.OpNotIn, Values: values}}},
		})
		cases := []struct {
			name   string
			attrs  map[string]any
			listed bool
		}{
			{"first", map[string]any{"a": "100"}, true},
			{"last", map[string]any{"a": values[n-1]}, true},
			{"unlisted", map[string]any{"a": "99"}, false},
			{"prefix", map[string]any{"a": "10"}, false},
			{"number", map[string]any{"a": float64(100 + n - 1)}, true},
			{"empty", map[string]any{"a": ""}, false},
		}
		for _, c := range cases {
			if got := snap.Evaluate("eq", "u", c.attrs).Reason == eval.ReasonRuleMatch; got != c.listed {
				t.Errorf("%d values, %s: equals matched %v, want %v", n, c.name, got, c.listed)
			}
			if got := snap.Evaluate("notin", "u", c.attrs).Reason == eval.ReasonRuleMatch; got == c.listed {
				t.Errorf("%d values, %s: not_in matched %v, want %v", n, c.name, got, !c.listed)
			}
		}
		if snap.Evaluate("eq", "u", nil).Reason == eval.ReasonRuleMatch || snap.Evaluate("notin", "u", nil).Reason != eval.ReasonRuleMatch {
			t.Errorf("%d values: a missing attribute must fail equals and satisfy not_in", n)
		}
	}
}
