package check_test

import (
	"encoding/json"
	"testing"

	"github.com/switchyard/switchyard/sdkgo/eval"
	"github.com/switchyard/switchyard/sdkgo/eval/check"
)

// FuzzRule: rule validation never panics on any decoded rule, and a rule
// it accepts has a condition or a segment_key, and only values the
// evaluator's parsers take: refused at write time, never at evaluation time
// (docs/reference/evaluation.md, Rule validation).
func FuzzRule(f *testing.F) {
	f.Add([]byte(`{"attribute":"v","operator":"semver_less_than","values":["v1.2.3-rc.1+b"]}`), "string")
	f.Add([]byte(`{"conditions":[{"attribute":"e","operator":"regex","values":["^a(b"]}],"rollout_percentage":101}`), "string")
	f.Add([]byte(`{"segment_key":"s","conditions":[{"attribute":"t","operator":"after","values":["-1"]}],"variants":[{"weight":0,"value":"x"}]}`), "integer")
	f.Add([]byte(`{"values":[],"variant":true,"variants":[{"weight":1,"value":true}]}`), "boolean")
	f.Fuzz(func(t *testing.T, raw []byte, flagType string) {
		var r eval.Rule
		if json.Unmarshal(raw, &r) != nil {
			return
		}
		if p := check.Rule("rules.0", eval.FlagType(flagType), r); len(p) > 0 {
			for _, x := range p {
				if x.Field == "" || x.Message == "" {
					t.Fatalf("a problem without a field or message: %+v", x)
				}
			}
			return
		}
		hasSegment := r.SegmentKey != nil && *r.SegmentKey != ""
		if r.Attribute == "" && len(r.Conditions) == 0 && !hasSegment {
			t.Fatalf("accepted a rule without any condition: %s", raw)
		}
		conds := r.Conditions
		if r.Attribute != "" {
			conds = append([]eval.Condition{{Attribute: r.Attribute, Operator: r.Operator, Values: r.Values}}, conds...)
		}
		for _, c := range conds {
			if !check.Operator(c.Operator) || len(c.Values) == 0 {
				t.Fatalf("accepted condition %+v", c)
			}
			for _, v := range c.Values {
				if err := eval.CheckValue(c.Operator, v); err != nil {
					t.Fatalf("accepted a value the evaluator refuses: %v", err)
				}
			}
		}
		if pct := r.RolloutPercentage; pct != nil && (*pct < 0 || *pct > 100) {
			t.Fatalf("accepted rollout %d", *pct)
		}
	})
}
