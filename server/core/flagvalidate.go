package core

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/sdkgo/eval"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/limits"
)

// validateFlag checks what the API document cannot: values of the flag's
// type, complete rules, segment references of the same environment, and
// prerequisites' required values of their flag's type. Flags reach it from
// the API, from merge patches, promotion, schedules and approvals alike.
func validateFlag(ctx context.Context, q *db.Queries, envID uuid.UUID, f eval.Flag) error {
	var p apperr.Problems
	if !limits.ValidKey(f.Key) {
		p.Add("key", "must be 1 to 100 ASCII letters, digits, underscores or hyphens")
	}
	switch f.FlagType {
	case eval.FlagTypeBoolean, eval.FlagTypeString, eval.FlagTypeInteger, eval.FlagTypeJSON:
	default:
		p.Add("flag_type", "must be one of boolean, string, integer, json")
		return p.Err() // every value check below depends on the type
	}
	if r := f.RolloutPercentage; r != nil && (*r < 0 || *r > 100) {
		p.Add("rollout_percentage", "must be between 0 and 100, or null for 100 percent")
	}
	checkValue(&p, "default_value", f.FlagType, f.DefaultValue)
	checkValue(&p, "disabled_value", f.FlagType, f.DisabledValue)

	segments, err := segmentKeys(ctx, q, envID)
	if err != nil {
		return err
	}
	for i, r := range f.Rules {
		field := fmt.Sprintf("rules.%d", i)
		if r.SegmentKey != nil && *r.SegmentKey != "" && !segments[*r.SegmentKey] {
			p.Add(field+".segment_key", "names no segment of this environment: %q", *r.SegmentKey)
		}
		checkRuleConditions(&p, field, r)
		checkValue(&p, field+".variant", f.FlagType, r.Variant)
		checkRuleRollout(&p, field, r)
		if len(r.Variants) > 0 {
			// docs/reference/evaluation.md, Per-rule split.
			switch {
			case f.FlagType == eval.FlagTypeBoolean:
				p.Add(field+".variants", "a boolean flag's rules cannot carry variants")
			case nullToNil(r.Variant) != nil:
				p.Add(field+".variants", "cannot be given together with variant")
			}
			checkVariants(&p, field+".variants", f.FlagType, r.Variants, true)
		}
	}
	checkVariants(&p, "variants", f.FlagType, f.Variants, false)
	if len(f.Prerequisites) > 0 {
		types, err := flagTypes(ctx, q, envID)
		if err != nil {
			return err
		}
		for i, pre := range f.Prerequisites {
			field := fmt.Sprintf("prerequisites.%d", i)
			switch {
			case !limits.ValidKey(pre.FlagKey):
				p.Add(field+".flag_key", "must be a flag key")
			case pre.FlagKey == f.Key:
				p.Add(field+".flag_key", "a flag cannot be its own prerequisite")
			case pre.RequiredValue != nil && !isJSONNull(pre.RequiredValue):
				// A missing prerequisite flag is allowed (it is simply
				// unsatisfied: docs/reference/evaluation.md, Prerequisites);
				// an existing one fixes the type of the required value.
				if t, ok := types[pre.FlagKey]; ok {
					checkValue(&p, field+".required_value", t, pre.RequiredValue)
				}
			}
		}
	}
	for i, tag := range f.Tags {
		if n := utf8.RuneCountInString(tag); n == 0 || n > 100 {
			p.Add(fmt.Sprintf("tags.%d", i), "must be 1 to 100 characters")
		}
	}
	return p.Err()
}

// checkRuleConditions checks a rule's conditions (docs/reference/evaluation.md,
// Conditions and Rule validation): the top-level one, present when attribute
// is not empty, needs an operator and at least one value; each entry of
// conditions needs all three; and a rule needs some condition or a
// segment_key. Values of regex, semver_* and before/after must parse with the
// evaluator's own parsers, so that no rule is stored that could never match.
func checkRuleConditions(p *apperr.Problems, field string, r eval.Rule) {
	hasSegment := r.SegmentKey != nil && *r.SegmentKey != ""
	switch {
	case r.Attribute != "":
		checkCondition(p, field, r.Operator, r.Values)
	case hasSegment:
		// Without an attribute a segment rule's operator and values are
		// not a condition; they were always ignored, and still are.
	case r.Operator != "" || len(r.Values) > 0:
		p.Add(field+".attribute", "is required when operator or values are given")
	case len(r.Conditions) == 0 && r.Conditions == nil:
		p.Add(field, "needs a condition (attribute, operator and values, or conditions) or a segment_key")
	}
	if r.Conditions != nil && len(r.Conditions) == 0 {
		p.Add(field+".conditions", "must not be empty: leave it out for no further conditions")
	}
	for j, c := range r.Conditions {
		cf := fmt.Sprintf("%s.conditions.%d", field, j)
		if c.Attribute == "" {
			p.Add(cf+".attribute", "is required")
		}
		checkCondition(p, cf, c.Operator, c.Values)
	}
}

// checkCondition checks one condition's operator and values; field is the
// rule or the conditions entry that holds them.
func checkCondition(p *apperr.Problems, field string, op eval.Operator, values []string) {
	switch {
	case op == "":
		p.Add(field+".operator", "is required")
		return
	case !knownOperators[op]:
		p.Add(field+".operator", "is not an operator: %q", op)
		return
	}
	if len(values) == 0 {
		p.Add(field+".values", "needs at least one value")
	}
	for k, v := range values {
		if err := eval.CheckValue(op, v); err != nil {
			p.Add(fmt.Sprintf("%s.values.%d", field, k), "%v", err)
		}
	}
}

// knownOperators are the operators of docs/reference/evaluation.md,
// Operators.
var knownOperators = map[eval.Operator]bool{
	eval.OpEquals: true, eval.OpNotEquals: true, eval.OpContains: true, eval.OpStartsWith: true,
	eval.OpEndsWith: true, eval.OpGreaterThan: true, eval.OpGreaterThanOrEqual: true,
	eval.OpLessThan: true, eval.OpLessThanOrEqual: true,
	eval.OpNotIn: true, eval.OpNotContains: true, eval.OpRegex: true,
	eval.OpSemverEquals: true, eval.OpSemverGreaterThan: true, eval.OpSemverGreaterThanOrEqual: true,
	eval.OpSemverLessThan: true, eval.OpSemverLessThanOrEqual: true,
	eval.OpBefore: true, eval.OpAfter: true,
}

// checkRuleRollout checks a rule's rollout_percentage
// (docs/reference/evaluation.md, Per-rule rollout).
func checkRuleRollout(p *apperr.Problems, field string, r eval.Rule) {
	if pct := r.RolloutPercentage; pct != nil && (*pct < 0 || *pct > 100) {
		p.Add(field+".rollout_percentage", "must be between 0 and 100")
	}
}

// checkVariants checks weighted variants, the flag's or a rule's: weights
// are not negative, values have the flag's type. A rule's weights must also
// sum to more than 0 (docs/reference/evaluation.md, Per-rule split); the
// flag's may all be 0, which means no variant applies
// (docs/reference/evaluation.md, Variant selection).
func checkVariants(p *apperr.Problems, field string, t eval.FlagType, vs []eval.Variant, positiveTotal bool) {
	total := 0
	for i, v := range vs {
		vf := fmt.Sprintf("%s.%d", field, i)
		if v.Weight < 0 {
			p.Add(vf+".weight", "must not be negative")
		} else {
			total += v.Weight
		}
		if nullToNil(v.Value) == nil && t != eval.FlagTypeJSON {
			p.Add(vf+".value", "is required")
		}
		checkValue(p, vf+".value", t, v.Value)
	}
	if positiveTotal && len(vs) > 0 && total <= 0 {
		p.Add(field, "weights must sum to more than 0")
	}
}

// checkValue reports a value that does not match the flag type: default,
// disabled, variant, rule-variant and required values must match
// (docs/reference/evaluation.md, Value types). An absent or null value means
// "unset" and always passes.
func checkValue(p *apperr.Problems, field string, t eval.FlagType, v json.RawMessage) {
	if nullToNil(v) == nil {
		return
	}
	if !matchesType(t, v) {
		p.Add(field, "must be a %s value", t)
	}
}

func matchesType(t eval.FlagType, v json.RawMessage) bool {
	var x any
	d := json.NewDecoder(bytes.NewReader(v))
	d.UseNumber()
	if err := d.Decode(&x); err != nil {
		return false
	}
	switch t {
	case eval.FlagTypeBoolean:
		_, ok := x.(bool)
		return ok
	case eval.FlagTypeString:
		_, ok := x.(string)
		return ok
	case eval.FlagTypeInteger:
		n, ok := x.(json.Number)
		if !ok {
			return false
		}
		f, err := n.Float64()
		// Integers must survive every SDK's number type: whole and within ±2^53.
		return err == nil && f == math.Trunc(f) && math.Abs(f) <= 1<<53
	case eval.FlagTypeJSON:
		return true
	}
	return false
}

func isJSONNull(v json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(v), []byte("null")) }

func segmentKeys(ctx context.Context, q *db.Queries, envID uuid.UUID) (map[string]bool, error) {
	segs, err := q.ListSegments(ctx, envID)
	if err != nil {
		return nil, fmt.Errorf("list segments: %w", err)
	}
	keys := make(map[string]bool, len(segs))
	for _, s := range segs {
		keys[s.Key] = true
	}
	return keys, nil
}

func flagTypes(ctx context.Context, q *db.Queries, envID uuid.UUID) (map[string]eval.FlagType, error) {
	rows, err := q.ListFlagTypes(ctx, envID)
	if err != nil {
		return nil, fmt.Errorf("list flag types: %w", err)
	}
	types := make(map[string]eval.FlagType, len(rows))
	for _, r := range rows {
		types[r.Key] = eval.FlagType(r.FlagType)
	}
	return types, nil
}
