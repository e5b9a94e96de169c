package eval_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard/switchyard/sdkgo/eval"
)

// fullFlag is a flag as the server streams it, with every field of the API's Flag object and
// each kind of optional value: an absent and a null required_value, an absent and a null rule
// variant.
const fullFlag = `{
  "key": "checkout",
  "environment_id": "8d3e4f6a-1b2c-4d5e-9f80-1a2b3c4d5e6f",
  "is_enabled": true,
  "rollout_percentage": 40,
  "description": "new checkout",
  "rules": [
    {"attribute": "plan", "operator": "equals", "values": ["pro", "team"], "variant": {"layout": "grid", "n": 1.5}},
    {"attribute": "age", "operator": "greater_than", "values": ["18"], "variant": null},
    {"attribute": "country", "operator": "not_equals", "values": ["US"], "segment_key": "eu"}
  ],
  "flag_type": "json",
  "default_value": {"layout": "list"},
  "disabled_value": null,
  "variants": [{"weight": 6, "value": [1, "two"]}, {"weight": 0, "value": null}],
  "prerequisites": [{"flag_key": "a"}, {"flag_key": "b", "required_value": null}, {"flag_key": "c", "required_value": false}],
  "tags": ["ui"],
  "owner_email": "owner@example.com",
  "archived_at": "2024-05-06T07:08:09.123456789+02:00",
  "client_side": true,
  "version": 12,
  "created_at": "2024-01-02T03:04:05Z",
  "updated_at": "2024-02-03T04:05:06.5Z"
}`

func decodeAny(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
	return v
}

// TestFlagJSONRoundTrip checks that the wire model loses nothing: decoding and re-encoding a
// streamed flag gives the same JSON value, and a second round trip gives the same Go value.
func TestFlagJSONRoundTrip(t *testing.T) {
	var f eval.Flag
	if err := json.Unmarshal([]byte(fullFlag), &f); err != nil {
		t.Fatalf("decode: %v", err)
	}
	out, err := json.Marshal(f)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	if diff := cmp.Diff(decodeAny(t, []byte(fullFlag)), decodeAny(t, out)); diff != "" {
		t.Errorf("round trip changed the JSON (-in +out):\n%s", diff)
	}
	var again eval.Flag
	if err := json.Unmarshal(out, &again); err != nil {
		t.Fatalf("decode again: %v", err)
	}
	if diff := cmp.Diff(f, again); diff != "" {
		t.Errorf("second round trip changed the flag (-first +second):\n%s", diff)
	}

	t.Run("absent and null stay apart", func(t *testing.T) {
		tests := []struct {
			name string
			got  json.RawMessage
			want json.RawMessage
		}{
			{"required_value absent", f.Prerequisites[0].RequiredValue, nil},
			{"required_value null", f.Prerequisites[1].RequiredValue, json.RawMessage(`null`)},
			{"required_value false", f.Prerequisites[2].RequiredValue, json.RawMessage(`false`)},
			{"rule variant absent", f.Rules[2].Variant, nil},
			{"rule variant null", f.Rules[1].Variant, json.RawMessage(`null`)},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if diff := cmp.Diff(tt.want, tt.got); diff != "" {
					t.Errorf("raw value mismatch (-want +got):\n%s", diff)
				}
			})
		}
	})
}

// TestFlagJSONDefaults checks that absent fields take the defaults of docs/reference/flags.md,
// Flag fields, when decoded, and that encoding always writes every field the API's Flag object requires.
func TestFlagJSONDefaults(t *testing.T) {
	var f eval.Flag
	if err := json.Unmarshal([]byte(`{"key": "k", "is_enabled": true}`), &f); err != nil {
		t.Fatalf("decode: %v", err)
	}
	want := eval.Flag{
		Key: "k", IsEnabled: true, FlagType: eval.FlagTypeBoolean,
		Rules: []eval.Rule{}, Variants: []eval.Variant{}, Prerequisites: []eval.Prerequisite{}, Tags: []string{},
	}
	if diff := cmp.Diff(want, f); diff != "" {
		t.Errorf("decoded defaults mismatch (-want +got):\n%s", diff)
	}

	var explicitNull eval.Flag
	if err := json.Unmarshal([]byte(`{"key": "k", "flag_type": null}`), &explicitNull); err != nil {
		t.Fatalf("decode: %v", err)
	}
	if explicitNull.FlagType != eval.FlagTypeBoolean {
		t.Errorf("flag_type null decoded as %q, want boolean", explicitNull.FlagType)
	}

	// A flag built in Go with nil slices and no type, as the server might build one.
	out, err := json.Marshal(eval.Flag{Key: "k", Rules: []eval.Rule{{Attribute: "a", Operator: eval.OpEquals}}})
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	got := decodeAny(t, out)
	wantJSON := decodeAny(t, []byte(`{
	  "key": "k", "environment_id": "", "is_enabled": false, "rollout_percentage": null,
	  "description": null, "rules": [{"attribute": "a", "operator": "equals", "values": []}],
	  "flag_type": "boolean", "default_value": null, "disabled_value": null, "variants": [],
	  "prerequisites": [], "tags": [], "owner_email": null, "archived_at": null, "client_side": false, "version": 0,
	  "created_at": "0001-01-01T00:00:00Z", "updated_at": "0001-01-01T00:00:00Z"}`))
	if diff := cmp.Diff(wantJSON, got); diff != "" {
		t.Errorf("encoded zero flag mismatch (-want +got):\n%s", diff)
	}
}

// TestSegmentRuleJSON checks the API's unexpanded form: a rule that only references a segment
// encodes without attribute and operator.
func TestSegmentRuleJSON(t *testing.T) {
	var r eval.Rule
	if err := json.Unmarshal([]byte(`{"segment_key": "beta", "variant": "new"}`), &r); err != nil {
		t.Fatalf("decode: %v", err)
	}
	out, err := json.Marshal(eval.Flag{Key: "k", Rules: []eval.Rule{r}})
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	var got struct {
		Rules []map[string]any `json:"rules"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("decode output: %v", err)
	}
	want := []map[string]any{{"values": []any{}, "segment_key": "beta", "variant": "new"}}
	if diff := cmp.Diff(want, got.Rules); diff != "" {
		t.Errorf("segment rule JSON mismatch (-want +got):\n%s", diff)
	}
}
