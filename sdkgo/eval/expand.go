package eval

import (
	"bytes"
	"encoding/json"
)

// ExpandSegments replaces every rule that references a segment by one rule per
// segment rule, in place and in the segment's order, so that evaluation stays
// first-match-wins (docs/reference/evaluation.md, Segment expansion). Each
// expanded rule keeps the segment rule's top-level condition and carries in
// conditions the segment rule's conditions, then the referencing rule's
// top-level condition and conditions; it takes the referencing rule's
// rollout_percentage, and the segment rule's own variant when it has one, else
// the referencing rule's variant or variants. On a boolean flag expanded rules
// carry no variant. A reference to a missing segment expands to no rules, which
// is what a deleted segment leaves behind. The server expands flags so
// before it sends them to SDKs, and the command line before it evaluates.
func ExpandSegments(f Flag, segments map[string][]Rule) Flag {
	expanded := make([]Rule, 0, len(f.Rules))
	for _, r := range f.Rules {
		if r.SegmentKey == nil || *r.SegmentKey == "" {
			r.SegmentKey = nil
			expanded = append(expanded, r)
			continue
		}
		for _, sr := range segments[*r.SegmentKey] {
			expanded = append(expanded, expandRule(f.FlagType, r, sr))
		}
	}
	f.Rules = expanded
	return f
}

// expandRule is the rule that segment rule sr becomes under referencing rule
// r. It shares no slice with either, so the segments' rules stay as read.
func expandRule(t FlagType, r, sr Rule) Rule {
	out := Rule{
		Attribute:         sr.Attribute,
		Operator:          sr.Operator,
		Values:            sr.Values,
		RolloutPercentage: r.RolloutPercentage,
	}
	n := len(sr.Conditions) + len(r.Conditions)
	if r.Attribute != "" {
		n++
	}
	if n > 0 {
		out.Conditions = make([]Condition, 0, n)
		out.Conditions = append(out.Conditions, sr.Conditions...)
		if r.Attribute != "" {
			out.Conditions = append(out.Conditions, Condition{Attribute: r.Attribute, Operator: r.Operator, Values: r.Values})
		}
		out.Conditions = append(out.Conditions, r.Conditions...)
	}
	switch {
	case t == FlagTypeBoolean:
		// A boolean flag's rules return true; no variant.
	case !isNullJSON(sr.Variant):
		out.Variant = sr.Variant
	case len(r.Variants) > 0:
		out.Variants = r.Variants
	default:
		out.Variant = r.Variant
	}
	return out
}

// isNullJSON reports an absent value or JSON null.
func isNullJSON(v json.RawMessage) bool {
	t := bytes.TrimSpace(v)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
}
