package eval

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
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
	opNotIn
	opNotContains
	opRegex
	opSemverEquals
	opSemverGreaterThan
	opSemverGreaterThanOrEqual
	opSemverLessThan
	opSemverLessThanOrEqual
	opBefore
	opAfter
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

	OpNotIn:                    opNotIn,
	OpNotContains:              opNotContains,
	OpRegex:                    opRegex,
	OpSemverEquals:             opSemverEquals,
	OpSemverGreaterThan:        opSemverGreaterThan,
	OpSemverGreaterThanOrEqual: opSemverGreaterThanOrEqual,
	OpSemverLessThan:           opSemverLessThan,
	OpSemverLessThanOrEqual:    opSemverLessThanOrEqual,
	OpBefore:                   opBefore,
	OpAfter:                    opAfter,
}

func (o opCode) numeric() bool { return opGreaterThan <= o && o <= opLessThanOrEqual }

func (o opCode) semver() bool { return opSemverEquals <= o && o <= opSemverLessThanOrEqual }

func (o opCode) instant() bool { return o == opBefore || o == opAfter }

// negative reports whether the operator holds for a missing attribute
// (docs/reference/evaluation.md, Missing attributes: a missing or null attribute satisfies
// not_equals, not_in and not_contains).
func (o opCode) negative() bool { return o == opNotEquals || o == opNotIn || o == opNotContains }

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
	// totalWeight is W of the variant bucket (docs/reference/evaluation.md, Buckets); 0 means
	// no variant applies.
	totalWeight uint64

	// sharedAttrs is set when some conditions have a cache slot (compiledCond.slot).
	sharedAttrs bool

	// Results are boxed once here, so returning them never allocates.
	defaultValue  any
	disabledValue any
}

type compiledRule struct {
	// conds are the rule's conditions, all of which must hold: the top-level one first when
	// the rule has an attribute, then Conditions in order. A rule without any never matches.
	conds []compiledCond
	// hasRollout is set when the rule carries rollout_percentage (docs/reference/evaluation.md,
	// Per-rule rollout).
	hasRollout bool
	rollout    int
	value      any // what a match returns without (or with all-zero) rule variants
	// variants and totalWeight are the rule's split; totalWeight 0 means none applies.
	variants    []compiledVariant
	totalWeight uint64
}

// compiledCond is one condition, its values parsed for its operator.
type compiledCond struct {
	attribute string
	op        opCode
	// plainText is set for a working operator that compares text with matchText: every one
	// but the numeric ones, before/after and regex.
	plainText bool
	// slot is the condition's place in an evaluation's attrCache when other conditions of
	// the flag test the same attribute, else -1.
	slot   int8
	values []string // for the text operators
	// set holds values for equals and not_in when there are more than setMinValues of them:
	// one hash lookup then costs less than comparing the text with each value in turn.
	set      map[string]struct{}
	numbers  []float64 // for the numeric operators: only the values that parse as numbers
	patterns []*regexp.Regexp
	versions []version
	instants []instant
	// broken is set when a value of regex, semver_* or before/after does not parse: the
	// API refuses such a rule (422), and an SDK that gets one anyway never matches it.
	broken bool
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

	// docs/reference/evaluation.md, Boolean flags: boolean flags evaluate to true when on and false when off;
	// their stored default_value and disabled_value do not change the result.
	boolean := f.FlagType == FlagTypeBoolean
	if boolean {
		c.defaultValue, c.disabledValue = true, false
	} else {
		c.defaultValue = decodeValue(f.DefaultValue, f.FlagType)
		// docs/reference/evaluation.md, Disabled result: a non-boolean flag without
		// disabled_value is disabled to null.
		c.disabledValue = decodeValue(f.DisabledValue, f.FlagType)
	}

	c.rules = make([]compiledRule, len(f.Rules))
	for i, r := range f.Rules {
		cr := compiledRule{value: c.defaultValue}
		// docs/reference/evaluation.md, Conditions: the top-level attribute/operator/values
		// is one more condition of the rule when attribute is a non-empty string.
		if r.Attribute != "" {
			cr.conds = append(cr.conds, compileCond(r.Attribute, r.Operator, r.Values))
		}
		for _, cond := range r.Conditions {
			cr.conds = append(cr.conds, compileCond(cond.Attribute, cond.Operator, cond.Values))
		}
		if r.RolloutPercentage != nil {
			cr.hasRollout = true
			cr.rollout = *r.RolloutPercentage
		}
		// docs/reference/evaluation.md, Evaluation order: a match returns true for boolean
		// flags, else the rule's variant, falling back to default_value when it is unset (absent or null).
		if !boolean && len(r.Variant) > 0 && !isJSONNull(r.Variant) {
			cr.value = decodeValue(r.Variant, f.FlagType)
		}
		// docs/reference/evaluation.md, Per-rule split: a rule of a non-boolean flag may split
		// its users over weighted variants instead; W = 0 means no variant applies
		// (Variant selection), and the rule then returns what it would without variants.
		if !boolean {
			cr.variants, cr.totalWeight = compileVariants(r.Variants, f.FlagType)
		}
		c.rules[i] = cr
	}

	c.assignSlots()

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

	// docs/reference/evaluation.md, Variant selection: variants apply to string, integer and
	// json flags only.
	if !boolean {
		c.variants, c.totalWeight = compileVariants(f.Variants, f.FlagType)
	}
	return c
}

// assignSlots gives a cache slot to each attribute that more than one condition of the flag
// tests, for the first maxCachedAttrs such attributes; every other condition gets -1.
func (c *compiledFlag) assignSlots() {
	uses := map[string]int{}
	for i := range c.rules {
		for j := range c.rules[i].conds {
			uses[c.rules[i].conds[j].attribute]++
		}
	}
	slots := map[string]int8{}
	for i := range c.rules {
		for j := range c.rules[i].conds {
			cond := &c.rules[i].conds[j]
			cond.slot = -1
			if uses[cond.attribute] < 2 {
				continue
			}
			s, ok := slots[cond.attribute]
			if !ok {
				if len(slots) == maxCachedAttrs {
					continue
				}
				s = int8(len(slots))
				slots[cond.attribute] = s
			}
			cond.slot = s
			c.sharedAttrs = true
		}
	}
}

// compileVariants decodes weighted variants and sums their weights (W of
// docs/reference/evaluation.md, Variant selection).
func compileVariants(vs []Variant, t FlagType) ([]compiledVariant, uint64) {
	if len(vs) == 0 {
		return nil, 0
	}
	out := make([]compiledVariant, len(vs))
	var total uint64
	for i, v := range vs {
		// A negative weight is invalid data (the API rejects it); it counts as 0, never chosen.
		w := uint64(max(v.Weight, 0))
		out[i] = compiledVariant{weight: w, value: decodeValue(v.Value, t)}
		total += w
	}
	return out, total
}

// compileCond parses a condition's values once for its operator, so that evaluation never
// parses a rule value.
func compileCond(attribute string, op Operator, values []string) compiledCond {
	c := compiledCond{attribute: attribute, op: opCodes[op]}
	switch {
	case c.op.numeric():
		for _, v := range values {
			// docs/reference/evaluation.md, Numbers: a rule value that is not a number never
			// matches, so it is dropped here once instead of failing on every call.
			if x, ok := parseNumber(v); ok {
				c.numbers = append(c.numbers, x)
			}
		}
	case c.op == opRegex:
		for _, v := range values {
			re, err := regexp.Compile(v)
			if err != nil {
				c.broken = true
				break
			}
			c.patterns = append(c.patterns, re)
		}
	case c.op.semver():
		for _, v := range values {
			ver, ok := parseVersion(v)
			if !ok {
				c.broken = true
				break
			}
			c.versions = append(c.versions, ver)
		}
	case c.op.instant():
		for _, v := range values {
			t, ok := parseInstant(v)
			if !ok {
				c.broken = true
				break
			}
			c.instants = append(c.instants, t)
		}
	default:
		c.values = values
		if (c.op == opEquals || c.op == opNotIn) && len(values) > setMinValues {
			c.set = make(map[string]struct{}, len(values))
			for _, v := range values {
				c.set[v] = struct{}{}
			}
		}
	}
	c.plainText = c.op != opUnknown && !c.broken && !c.op.numeric() && !c.op.instant() && c.op != opRegex
	return c
}

// setMinValues is the number of values up to which equals and not_in compare the text with
// each value in turn; above it they look it up in a set. Measured with 20 values of 2 and 3
// characters (bench/evalpeers, scenario d), the set is the faster.
const setMinValues = 8

// ErrInvalidValue is what CheckValue wraps for a rule value its operator cannot use.
var ErrInvalidValue = errors.New("invalid rule value")

// CheckValue reports whether value is a valid rule value for op: a pattern that compiles
// (regex), a valid version (semver_*) or an instant (before, after), with the same parser the
// evaluator uses, so that the server refuses at write time exactly the values that would never
// match (docs/reference/evaluation.md, Rule validation: 422). Values of the other operators are always valid.
func CheckValue(op Operator, value string) error {
	switch code := opCodes[op]; {
	case code == opRegex:
		if _, err := regexp.Compile(value); err != nil {
			return fmt.Errorf("%w: %q is not an RE2 pattern: %w", ErrInvalidValue, value, err)
		}
	case code.semver():
		if _, ok := parseVersion(value); !ok {
			return fmt.Errorf("%w: %q is not a semantic version", ErrInvalidValue, value)
		}
	case code.instant():
		if _, ok := parseInstant(value); !ok {
			return fmt.Errorf("%w: %q is neither an RFC 3339 date-time nor epoch milliseconds in the years 0000 to 9999", ErrInvalidValue, value)
		}
	}
	return nil
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

// parseNumber reads a rule value or a string attribute as a number.
// docs/reference/evaluation.md, Numbers: numeric operators parse both sides as 64-bit floats. Only plain decimal notation counts: an
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
