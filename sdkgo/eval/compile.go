package eval

import (
	"encoding/json"
	"math"
	"strconv"
)

// opCode is an Operator resolved once at compile time, so that evaluation switches on a small
// integer instead of comparing strings.
type opCode uint8

const (
	opUnknown opCode = iota
	opEquals
	opNotEquals
	opContains
	opStartsWith
	opEndsWith
	opGreaterThan
	opGreaterThanOrEqual
	opLessThan
	opLessThanOrEqual
)

var opCodes = map[Operator]opCode{
	OpEquals:             opEquals,
	OpNotEquals:          opNotEquals,
	OpContains:           opContains,
	OpStartsWith:         opStartsWith,
	OpEndsWith:           opEndsWith,
	OpGreaterThan:        opGreaterThan,
	OpGreaterThanOrEqual: opGreaterThanOrEqual,
	OpLessThan:           opLessThan,
	OpLessThanOrEqual:    opLessThanOrEqual,
}

func (o opCode) numeric() bool { return o >= opGreaterThan }

// compiledFlag is the evaluation form of one flag. It is built once when the flag arrives and
// never changed afterwards, so snapshots share it and readers need no locks. Everything an
// evaluation needs is precomputed: numbers parsed, values decoded and boxed, the hash prefix
// concatenated.
type compiledFlag struct {
	src Flag // deep copy of the wire form, returned by Snapshot.Flag

	key        string
	hashPrefix string // key + ":", the start of every bucketing input
	enabled    bool
	hasRollout bool // false when rollout_percentage is null (100 %)
	rollout    int

	rules    []compiledRule
	prereqs  []compiledPrereq
	variants []compiledVariant
	// totalWeight is W of decisions.md's variant bucket; 0 means no variant applies.
	totalWeight uint64

	// Results are boxed once here, so returning them never allocates.
	defaultValue  any
	disabledValue any
}

type compiledRule struct {
	attribute string
	op        opCode
	values    []string  // for the string operators
	numbers   []float64 // for the numeric operators: only the values that parse as numbers
	value     any       // what a match returns
}

type compiledPrereq struct {
	flagKey     string
	hasRequired bool
	required    any
}

// unmatchable stands for a required_value that is not valid JSON: jsonEqual never matches it.
type unmatchable struct{}

type compiledVariant struct {
	weight uint64
	value  any
}

// compile builds the evaluation form of f. It never fails: data the evaluator cannot use
// (an unknown operator, a value of the wrong type, malformed JSON) simply never matches or
// evaluates as null, so that one bad flag cannot break an SDK.
func compile(f Flag) *compiledFlag {
	f = f.clone()
	f.normalize()
	c := &compiledFlag{
		src:        f,
		key:        f.Key,
		hashPrefix: f.Key + ":",
		enabled:    f.IsEnabled,
	}
	if f.RolloutPercentage != nil {
		c.hasRollout = true
		c.rollout = *f.RolloutPercentage
	}

	// decisions.md, Further points: boolean flags evaluate to true when on and false when off;
	// their stored default_value and disabled_value do not change the result.
	boolean := f.FlagType == FlagTypeBoolean
	if boolean {
		c.defaultValue, c.disabledValue = true, false
	} else {
		c.defaultValue = decodeValue(f.DefaultValue, f.FlagType)
		// decisions.md, Evaluation: a non-boolean flag without disabled_value is disabled to null.
		c.disabledValue = decodeValue(f.DisabledValue, f.FlagType)
	}

	c.rules = make([]compiledRule, len(f.Rules))
	for i, r := range f.Rules {
		cr := compiledRule{attribute: r.Attribute, op: opCodes[r.Operator], value: c.defaultValue}
		if cr.op.numeric() {
			for _, v := range r.Values {
				// Spec, Evaluation rules step 7: a rule value that is not a number never
				// matches, so it is dropped here once instead of failing on every call.
				if x, ok := parseNumber(v); ok {
					cr.numbers = append(cr.numbers, x)
				}
			}
		} else {
			cr.values = r.Values
		}
		// Spec, Evaluation rules step 4: a match returns true for boolean flags, else the
		// rule's variant, falling back to default_value when it is unset (absent or null).
		if !boolean && len(r.Variant) > 0 && !isJSONNull(r.Variant) {
			cr.value = decodeValue(r.Variant, f.FlagType)
		}
		c.rules[i] = cr
	}

	c.prereqs = make([]compiledPrereq, len(f.Prerequisites))
	for i, p := range f.Prerequisites {
		cp := compiledPrereq{flagKey: p.FlagKey}
		// An absent required_value only requires the prerequisite to be enabled; a JSON null
		// requires the value null. Malformed JSON requires a value no evaluation returns.
		if len(p.RequiredValue) > 0 {
			cp.hasRequired = true
			if err := json.Unmarshal(p.RequiredValue, &cp.required); err != nil {
				cp.required = unmatchable{}
			}
		}
		c.prereqs[i] = cp
	}

	// Spec, Evaluation rules step 6: variants apply to string, integer and json flags only.
	if !boolean {
		c.variants = make([]compiledVariant, len(f.Variants))
		for i, v := range f.Variants {
			// A negative weight is invalid data (the API rejects it); it counts as 0, never chosen.
			w := uint64(max(v.Weight, 0))
			c.variants[i] = compiledVariant{weight: w, value: decodeValue(v.Value, f.FlagType)}
			c.totalWeight += w
		}
	}
	return c
}

// decodeValue decodes raw JSON once into the value evaluations return: nil, bool, float64,
// string, []any or map[string]any. A value that does not match the flag's type is invalid data
// (the API answers 422 for it) and becomes null, so a result always has the flag's type or is
// null. Flag types unknown to this SDK accept any JSON value, like json.
func decodeValue(raw json.RawMessage, t FlagType) any {
	if len(raw) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil
	}
	switch t {
	case FlagTypeString:
		if _, ok := v.(string); !ok {
			return nil
		}
	case FlagTypeInteger:
		if f, ok := v.(float64); !ok || f != math.Trunc(f) {
			return nil
		}
	}
	return v
}

func isJSONNull(raw json.RawMessage) bool {
	var v any
	return json.Unmarshal(raw, &v) == nil && v == nil
}

// parseNumber reads a rule value or a string attribute as a number. decisions.md: numeric
// operators parse both sides as 64-bit floats. Only plain decimal notation counts: an
// optional sign, digits with an optional fraction, an optional exponent ("42", "-1.5", ".5",
// "1e3"). strconv alone would also take hexadecimal floats, digit underscores, "Inf" and
// "NaN", which other SDKs do not read as numbers. Values beyond the float64 range fail too.
func parseNumber(s string) (float64, bool) {
	if !isDecimal(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// isDecimal reports whether s matches [+-]?(d+(\.d*)?|\.d+)([eE][+-]?d+)?.
func isDecimal(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := 0
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(s)
}
