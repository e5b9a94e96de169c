package eval

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// matches reports whether the rule's condition holds for the attributes. Spec, Evaluation
// rules step 7: a rule matches when its condition holds for any one of its values.
func (r *compiledRule) matches(attrs map[string]any) bool {
	v, ok := attrs[r.attribute]
	if !ok || v == nil {
		// Spec, Evaluation rules step 7: a user lacking the attribute satisfies not_equals
		// and fails every other operator. A nil value counts as lacking it.
		return r.op == opNotEquals
	}
	if r.op.numeric() {
		x, ok := numberOf(v)
		if !ok {
			// A non-numeric attribute never matches and raises no error.
			return false
		}
		return r.matchNumber(x)
	}
	if r.op == opUnknown {
		return false
	}
	// decisions.md, Evaluation: string operators compare the attribute's text form: a
	// string as it is, a number in its shortest decimal form, a boolean as true/false.
	switch x := v.(type) {
	case string:
		return r.matchText(x)
	case bool:
		if x {
			return r.matchText("true")
		}
		return r.matchText("false")
	}
	var buf [32]byte
	b, ok := appendNumberText(buf[:0], v)
	if !ok {
		// Maps, slices and other values have no text form and match nothing, not even
		// not_equals: the attribute is present, it just cannot be compared.
		return false
	}
	// The conversion does not escape, so for ordinary numbers (at most 32 characters) the
	// compiler keeps the string on the stack.
	return r.matchText(string(b))
}

// matchText applies a string operator to the attribute's text form s. Comparison is
// case-sensitive (decisions.md, Evaluation).
func (r *compiledRule) matchText(s string) bool {
	for _, v := range r.values {
		var hit bool
		switch r.op {
		case opEquals:
			hit = s == v
		case opNotEquals:
			// decisions.md, Further points: with several values not_equals follows the
			// specification literally and matches when s differs from any one of them.
			hit = s != v
		case opContains:
			hit = strings.Contains(s, v)
		case opStartsWith:
			hit = strings.HasPrefix(s, v)
		case opEndsWith:
			hit = strings.HasSuffix(s, v)
		}
		if hit {
			return true
		}
	}
	return false
}

// matchNumber applies a numeric operator to the attribute x and the rule's parsed values.
func (r *compiledRule) matchNumber(x float64) bool {
	for _, y := range r.numbers {
		var hit bool
		switch r.op {
		case opGreaterThan:
			hit = x > y
		case opGreaterThanOrEqual:
			hit = x >= y
		case opLessThan:
			hit = x < y
		case opLessThanOrEqual:
			hit = x <= y
		}
		if hit {
			return true
		}
	}
	return false
}

// numberOf reads an attribute as a number for the numeric operators (decisions.md: both
// sides are parsed as 64-bit floats). Every Go integer and float kind and json.Number count,
// and strings are parsed; booleans, NaN, infinities and anything else are not numbers. The
// type switch keeps this free of allocation.
func numberOf(v any) (float64, bool) {
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case string:
		return parseNumber(x)
	case json.Number:
		return parseNumber(string(x))
	case int:
		f = float64(x)
	case int64:
		f = float64(x)
	case int32:
		f = float64(x)
	case int16:
		f = float64(x)
	case int8:
		f = float64(x)
	case uint:
		f = float64(x)
	case uint64:
		f = float64(x)
	case uint32:
		f = float64(x)
	case uint16:
		f = float64(x)
	case uint8:
		f = float64(x)
	case uintptr:
		f = float64(x)
	case float32:
		f = float64(x)
	default:
		return 0, false
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// appendNumberText appends the shortest decimal form of a numeric attribute ("30", "30.5",
// never an exponent) and reports whether v is a number. Integers are written exactly;
// json.Number is normalised through float64 like a decoded JSON number, so "30.0" reads as 30.
func appendNumberText(dst []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case float64:
		return appendFloatText(dst, x, 64)
	case float32:
		return appendFloatText(dst, float64(x), 32)
	case json.Number:
		f, ok := parseNumber(string(x))
		if !ok {
			return dst, false
		}
		return appendFloatText(dst, f, 64)
	case int:
		return strconv.AppendInt(dst, int64(x), 10), true
	case int64:
		return strconv.AppendInt(dst, x, 10), true
	case int32:
		return strconv.AppendInt(dst, int64(x), 10), true
	case int16:
		return strconv.AppendInt(dst, int64(x), 10), true
	case int8:
		return strconv.AppendInt(dst, int64(x), 10), true
	case uint:
		return strconv.AppendUint(dst, uint64(x), 10), true
	case uint64:
		return strconv.AppendUint(dst, x, 10), true
	case uint32:
		return strconv.AppendUint(dst, uint64(x), 10), true
	case uint16:
		return strconv.AppendUint(dst, uint64(x), 10), true
	case uint8:
		return strconv.AppendUint(dst, uint64(x), 10), true
	case uintptr:
		return strconv.AppendUint(dst, uint64(x), 10), true
	}
	return dst, false
}

// appendFloatText writes f in shortest decimal form. NaN and infinities have no decimal form
// and match nothing; negative zero is written as 0, as JSON-minded SDKs print it.
func appendFloatText(dst []byte, f float64, bitSize int) ([]byte, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst, false
	}
	if f == 0 {
		f = 0
	}
	return strconv.AppendFloat(dst, f, 'f', -1, bitSize), true
}
