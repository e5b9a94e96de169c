package eval

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// holds reports whether the condition holds for the attributes. docs/reference/evaluation.md,
// Rules: a condition holds when it holds for any one of its values, except not_in and
// not_contains, which hold when the attribute matches none of them.
func (c *compiledCond) holds(attrs map[string]any, cache *attrCache) bool {
	v := c.lookup(attrs, cache)
	if v == nil {
		// A user lacking the attribute satisfies not_equals, not_in and not_contains and
		// fails every other operator. A nil value counts as lacking it.
		return c.op.negative()
	}
	if c.plainText {
		// The common case first: a text operator and a string attribute.
		if x, ok := v.(string); ok {
			if c.op == opEquals {
				return c.anyEqual(x) // inlined, unlike matchText
			}
			return c.matchText(x)
		}
	}
	switch {
	case c.op == opUnknown || c.broken:
		return false
	case c.op.numeric():
		x, ok := numberOf(v)
		if !ok {
			// A non-numeric attribute never matches and raises no error.
			return false
		}
		return c.matchNumber(x)
	case c.op.instant():
		t, ok := instantOf(v)
		return ok && c.matchInstant(t)
	}
	// docs/reference/evaluation.md, Text form: string operators compare the attribute's text form: a
	// string as it is, a number in its shortest decimal form, a boolean as true/false.
	switch x := v.(type) {
	case string:
		if c.op == opRegex {
			return c.matchPattern(x)
		}
		return c.matchText(x)
	case bool:
		s := "false"
		if x {
			s = "true"
		}
		if c.op == opRegex {
			return c.matchPattern(s)
		}
		return c.matchText(s)
	}
	var buf [32]byte
	b, ok := appendNumberText(buf[:0], v)
	if !ok {
		// Maps, slices and other values have no text form and match nothing, not even
		// not_equals, not_in or not_contains: the attribute is present, it just cannot be
		// compared.
		return false
	}
	if c.op == opRegex {
		// regexp keeps its input in a pooled machine, so the text escapes: a number
		// matched against a pattern costs one small allocation.
		return c.matchPattern(string(b))
	}
	// The conversion does not escape, so for ordinary numbers (at most 32 characters) the
	// compiler keeps the string on the stack.
	return c.matchText(string(b))
}

// maxCachedAttrs is the number of attributes per flag whose values one evaluation remembers.
const maxCachedAttrs = 8

// attrCache remembers, for one evaluation of one flag, the attributes that several of its
// conditions test (compiledCond.slot), so that each is looked up in the caller's map once:
// scenario d of bench/evalpeers tests the same three attributes in each of its three rules.
type attrCache struct {
	loaded uint8 // bit slot is set once values[slot] has been looked up
	values [maxCachedAttrs]any
}

// lookup returns the attribute the condition tests, nil when it is absent (holds treats an
// absent attribute and a nil value alike), through the cache when the condition has a slot.
func (c *compiledCond) lookup(attrs map[string]any, cache *attrCache) any {
	if cache == nil || c.slot < 0 {
		return attrs[c.attribute]
	}
	bit := uint8(1) << c.slot
	if cache.loaded&bit == 0 {
		cache.values[c.slot] = attrs[c.attribute]
		cache.loaded |= bit
	}
	return cache.values[c.slot]
}

// matchText applies a text operator other than regex to the attribute's text form s.
// Comparison is case-sensitive (docs/reference/evaluation.md, Text form). It must not hand s to anything
// that keeps it (regexp does), so that callers may pass text held on their stack.
func (c *compiledCond) matchText(s string) bool {
	switch {
	case c.op == opEquals:
		// The commonest operator gets its own loop, without the per-value operator switch
		// below, and a set lookup when the rule lists many values.
		return c.anyEqual(s)
	case c.op == opNotIn:
		return !c.anyEqual(s)
	case c.op == opNotContains:
		for _, v := range c.values {
			if strings.Contains(s, v) {
				return false
			}
		}
		return true
	case c.op.semver():
		// An attribute that is not a valid version never matches.
		ver, ok := parseVersion(s)
		return ok && c.matchVersion(ver)
	}
	for _, v := range c.values {
		var hit bool
		switch c.op {
		case opEquals:
			hit = s == v
		case opNotEquals:
			// docs/reference/evaluation.md, Rules: with several values not_equals is read
			// literally and matches when s differs from any one of them.
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

// anyEqual reports whether s equals one of the rule's values: through the set built at
// compile time for long lists, else by comparing them in order.
func (c *compiledCond) anyEqual(s string) bool {
	if c.set != nil {
		_, ok := c.set[s]
		return ok
	}
	for _, v := range c.values {
		if s == v {
			return true
		}
	}
	return false
}

// matchPattern reports whether any pattern matches anywhere in s (docs/reference/evaluation.md,
// Operators: regex).
func (c *compiledCond) matchPattern(s string) bool {
	for _, re := range c.patterns {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

// matchVersion compares the attribute's version with each rule version by SemVer precedence.
func (c *compiledCond) matchVersion(a version) bool {
	for _, b := range c.versions {
		d := compareVersions(a, b)
		var hit bool
		switch c.op {
		case opSemverEquals:
			hit = d == 0
		case opSemverGreaterThan:
			hit = d > 0
		case opSemverGreaterThanOrEqual:
			hit = d >= 0
		case opSemverLessThan:
			hit = d < 0
		case opSemverLessThanOrEqual:
			hit = d <= 0
		}
		if hit {
			return true
		}
	}
	return false
}

// matchInstant compares the attribute's instant with each rule instant.
func (c *compiledCond) matchInstant(t instant) bool {
	for _, u := range c.instants {
		d := compareInstants(t, u)
		if (c.op == opBefore && d < 0) || (c.op == opAfter && d > 0) {
			return true
		}
	}
	return false
}

// matchNumber applies a numeric operator to the attribute x and the rule's parsed values.
func (c *compiledCond) matchNumber(x float64) bool {
	for _, y := range c.numbers {
		var hit bool
		switch c.op {
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

// numberOf reads an attribute as a number for the numeric operators
// (docs/reference/evaluation.md, Numbers: both sides are parsed as 64-bit floats). Every Go integer and float kind and json.Number count,
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
