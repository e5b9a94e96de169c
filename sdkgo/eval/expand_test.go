package eval_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard/switchyard/sdkgo/eval"
)

// docs/reference/evaluation.md, Segment expansion: a segment rule is replaced
// by the segment's rules in place; the referencing rule's variant fills the
// segment rules that have none; a missing segment leaves nothing.
func TestExpandSegments(t *testing.T) {
	segments := map[string][]eval.Rule{
		"beta": {
			{Attribute: "plan", Operator: eval.OpEquals, Values: []string{"pro"}},
			{Attribute: "email", Operator: eval.OpEndsWith, Values: []string{"@acme.io"}, Variant: json.RawMessage(`"acme"`)},
		},
	}
	f := eval.Flag{Key: "ui", FlagType: eval.FlagTypeString, Rules: []eval.Rule{
		{Attribute: "country", Operator: eval.OpEquals, Values: []string{"NL"}, Variant: json.RawMessage(`"dutch"`)},
		{SegmentKey: ptr("beta"), Values: []string{}, Variant: json.RawMessage(`"beta"`)},
		{SegmentKey: ptr("gone"), Values: []string{}, Variant: json.RawMessage(`"never"`)},
		{Attribute: "age", Operator: eval.OpGreaterThan, Values: []string{"30"}},
	}}
	got := eval.ExpandSegments(f, segments).Rules
	want := []eval.Rule{
		{Attribute: "country", Operator: eval.OpEquals, Values: []string{"NL"}, Variant: json.RawMessage(`"dutch"`)},
		{Attribute: "plan", Operator: eval.OpEquals, Values: []string{"pro"}, Variant: json.RawMessage(`"beta"`)},
		{Attribute: "email", Operator: eval.OpEndsWith, Values: []string{"@acme.io"}, Variant: json.RawMessage(`"acme"`)},
		{Attribute: "age", Operator: eval.OpGreaterThan, Values: []string{"30"}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("expanded rules (-want +got):\n%s", d)
	}
	if f.Rules[1].SegmentKey == nil {
		t.Error("expandFlag changed its input")
	}
}

func intp(n int) *int { return &n }

// docs/reference/evaluation.md, Segment expansion: one rule per segment
// rule; the segment rule's top-level condition stays top-level; conditions
// are the segment rule's, then the referencing rule's top-level condition,
// then its conditions; the referencing rule's rollout applies; the segment
// rule's variant wins over the referencing rule's variant or variants.
func TestExpandFlagConditions(t *testing.T) {
	split := []eval.Variant{{Weight: 1, Value: json.RawMessage(`"a"`)}, {Weight: 3, Value: json.RawMessage(`"b"`)}}
	segments := map[string][]eval.Rule{
		"beta": {
			{Attribute: "plan", Operator: eval.OpEquals, Values: []string{"pro"}},
			{Values: []string{}, Conditions: []eval.Condition{{Attribute: "v", Operator: eval.OpSemverGreaterThanOrEqual, Values: []string{"2.4.0"}}}, Variant: json.RawMessage(`"seg"`)},
		},
	}
	country := eval.Condition{Attribute: "country", Operator: eval.OpNotIn, Values: []string{"DE"}}
	signup := eval.Condition{Attribute: "signup", Operator: eval.OpAfter, Values: []string{"2026-03-01T00:00:00Z"}}
	semver := segments["beta"][1].Conditions[0]
	tests := []struct {
		name string
		flag eval.Flag
		want []eval.Rule
	}{
		{
			name: "top-level condition, conditions, rollout and split",
			flag: eval.Flag{Key: "f", FlagType: eval.FlagTypeString, Rules: []eval.Rule{
				{SegmentKey: ptr("beta"), Attribute: "country", Operator: eval.OpNotIn, Values: []string{"DE"}, Conditions: []eval.Condition{signup}, RolloutPercentage: intp(30), Variants: split},
			}},
			want: []eval.Rule{
				{Attribute: "plan", Operator: eval.OpEquals, Values: []string{"pro"}, Conditions: []eval.Condition{country, signup}, RolloutPercentage: intp(30), Variants: split},
				{Values: []string{}, Conditions: []eval.Condition{semver, country, signup}, RolloutPercentage: intp(30), Variant: json.RawMessage(`"seg"`)},
			},
		},
		{
			name: "conditions only, variant propagates",
			flag: eval.Flag{Key: "f", FlagType: eval.FlagTypeString, Rules: []eval.Rule{
				{SegmentKey: ptr("beta"), Values: []string{}, Conditions: []eval.Condition{signup}, Variant: json.RawMessage(`"ref"`)},
			}},
			want: []eval.Rule{
				{Attribute: "plan", Operator: eval.OpEquals, Values: []string{"pro"}, Conditions: []eval.Condition{signup}, Variant: json.RawMessage(`"ref"`)},
				{Values: []string{}, Conditions: []eval.Condition{semver, signup}, Variant: json.RawMessage(`"seg"`)},
			},
		},
		{
			name: "boolean flag: no variant",
			flag: eval.Flag{Key: "f", FlagType: eval.FlagTypeBoolean, Rules: []eval.Rule{
				{SegmentKey: ptr("beta"), Values: []string{}, Variant: json.RawMessage(`true`), RolloutPercentage: intp(0)},
			}},
			want: []eval.Rule{
				{Attribute: "plan", Operator: eval.OpEquals, Values: []string{"pro"}, RolloutPercentage: intp(0)},
				{Values: []string{}, Conditions: []eval.Condition{semver}, RolloutPercentage: intp(0)},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := eval.ExpandSegments(tc.flag, segments).Rules
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("expanded rules (-want +got):\n%s", d)
			}
			if len(segments["beta"][0].Conditions) != 0 || len(segments["beta"][1].Conditions) != 1 {
				t.Errorf("expandFlag changed the segment's rules: %+v", segments["beta"])
			}
		})
	}
}
