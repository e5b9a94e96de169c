package core

import (
	"encoding/json"
	"testing"

	"github.com/switchyard/switchyard/sdkgo/eval"
	"github.com/switchyard/switchyard/server/apperr"
)

// FuzzCheckRule: rule validation never panics on any decoded rule, and a rule
// it accepts has a condition or a segment_key, and only values the
// evaluator's parsers take: refused at write time, never at evaluation time
// (docs/reference/evaluation.md, Rule validation).
func FuzzCheckRule(f *testing.F) {
	f.Add([]byte(`{"attribute":"v","operator":"semver_less_than","values":["v1.2.3-rc.1+b"]}`), "string")
	f.Add([]byte(`{"conditions":[{"attribute":"e","operator":"regex","values":["^a(b"]}],"rollout_percentage":101}`), "string")
	f.Add([]byte(`{"segment_key":"s","conditions":[{"attribute":"t","operator":"after","values":["-1"]}],"variants":[{"weight":0,"value":"x"}]}`), "integer")
	f.Add([]byte(`{"values":[],"variant":true,"variants":[{"weight":1,"value":true}]}`), "boolean")
	f.Fuzz(func(t *testing.T, raw []byte, flagType string) {
		var r eval.Rule
		if json.Unmarshal(raw, &r) != nil {
			return
		}
		var p apperr.Problems
		checkRuleConditions(&p, "rules.0", r)
		checkRuleRollout(&p, "rules.0", r)
		checkVariants(&p, "rules.0.variants", eval.FlagType(flagType), r.Variants, true)
		if len(p) > 0 {
			if p.Err() == nil {
				t.Fatal("problems but no error")
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
			if !knownOperators[c.Operator] || len(c.Values) == 0 {
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
