package core

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard/switchyard/sdkgo/eval"
)

func strp(s string) *string { return &s }

// Spec, TargetingRule: a segment rule is replaced by the segment's rules in
// place; the referencing rule's variant fills the segment rules that have
// none; a missing segment leaves nothing.
func TestExpandFlag(t *testing.T) {
	segments := map[string][]eval.Rule{
		"beta": {
			{Attribute: "plan", Operator: eval.OpEquals, Values: []string{"pro"}},
			{Attribute: "email", Operator: eval.OpEndsWith, Values: []string{"@acme.io"}, Variant: json.RawMessage(`"acme"`)},
		},
	}
	f := eval.Flag{Key: "ui", FlagType: eval.FlagTypeString, Rules: []eval.Rule{
		{Attribute: "country", Operator: eval.OpEquals, Values: []string{"NL"}, Variant: json.RawMessage(`"dutch"`)},
		{SegmentKey: strp("beta"), Values: []string{}, Variant: json.RawMessage(`"beta"`)},
		{SegmentKey: strp("gone"), Values: []string{}, Variant: json.RawMessage(`"never"`)},
		{Attribute: "age", Operator: eval.OpGreaterThan, Values: []string{"30"}},
	}}
	got := expandFlag(f, segments).Rules
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
