package eval

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// RenderValue renders an evaluation result as the string an impression carries
// (docs/reference/evaluation.md, Rendered values: booleans true/false, strings as they are, numbers in shortest
// decimal form, JSON values as compact JSON). nil renders as null. Numbers inside objects and
// arrays follow JSON's own number form. RenderValue allocates; it is meant for the impression
// path, not for Evaluate.
func RenderValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(x)
	case string:
		return x
	}
	var buf [32]byte
	if b, ok := appendNumberText(buf[:0], v); ok {
		return string(b)
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	// Impressions are data, not HTML: keep <, > and & as they are.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only values a JSON decoder cannot produce get here (channels, functions, NaN).
		return "null"
	}
	return string(bytes.TrimSuffix(out.Bytes(), []byte("\n")))
}
