package eval_test

import (
	"encoding/json"
	"testing"

	"github.com/switchyard/switchyard/sdkgo/eval"
)

// TestRenderValue pins the impression value rendering of docs/reference/evaluation.md,
// Rendered values.
func TestRenderValue(t *testing.T) {
	var decoded any
	if err := json.Unmarshal([]byte(`{"b": [1, 2.5, "x<y"], "a": null, "c": 1e21}`), &decoded); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"true", true, "true"},
		{"false", false, "false"},
		{"string as it is", `say "hi" <b>`, `say "hi" <b>`},
		{"empty string", "", ""},
		{"null", nil, "null"},
		{"integer-valued float", 30.0, "30"},
		{"fraction", 30.5, "30.5"},
		{"large number without exponent", 1e21, "1000000000000000000000"},
		{"negative", -2.25, "-2.25"},
		{"int", 42, "42"},
		{"uint64", uint64(18446744073709551615), "18446744073709551615"},
		{"json.Number", json.Number("7.0"), "7"},
		{"object compact, keys sorted, no HTML escaping", decoded, `{"a":null,"b":[1,2.5,"x<y"],"c":1e+21}`},
		{"array", []any{true, "a", 1.0}, `[true,"a",1]`},
		{"unencodable", make(chan int), "null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := eval.RenderValue(tt.v); got != tt.want {
				t.Errorf("RenderValue(%#v) = %q, want %q", tt.v, got, tt.want)
			}
		})
	}
}
