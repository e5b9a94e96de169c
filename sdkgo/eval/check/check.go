// Package check holds the rules a flag or a segment must follow before it
// is stored (docs/reference/evaluation.md, Rule validation and Value
// types): the rules the API document cannot express. The server applies
// them to every write and the command line to a file before any write, so
// that both give the same answer. It is pure, like the evaluator whose
// model and parsers it uses.
package check

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/switchyard/switchyard/sdkgo/eval"
)

// Problem is one bad field: its path in the API's field names (rules.0.values.1)
// and what is wrong with it.
type Problem struct {
	Field, Message string
}

// Problems are a check's findings, in the order found.
type Problems []Problem

func (p *Problems) add(field, format string, args ...any) {
	*p = append(*p, Problem{Field: field, Message: fmt.Sprintf(format, args...)})
}

// keyPattern is the key rule of flags, segments, experiments and goal events.
var keyPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,100}$`)

// KeyRule says what Key checks.
const KeyRule = "must be 1 to 100 ASCII letters, digits, underscores or hyphens"

// Key reports whether s follows the key rule.
func Key(s string) bool { return keyPattern.MatchString(s) }

// ProjectSlug derives a project's slug from its name (docs/reference/identity.md,
// Projects and environments): lowercase ASCII, every run of other characters
// becomes one hyphen, trimmed of hyphens. Only ASCII letters are lowercased, so
// a non-ASCII letter whose lowercase is ASCII (the Kelvin sign) still counts as
// "other". A name without ASCII letters or digits yields "". Renaming a
// project derives its slug anew, so a name and a slug go together.
func ProjectSlug(name string) string {
	var b strings.Builder
	hyphen := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		default:
			hyphen = true
			continue
		}
		if hyphen && b.Len() > 0 {
			b.WriteByte('-')
		}
		hyphen = false
		b.WriteByte(c)
	}
	return b.String()
}

// SeededEnvironment is one of the environments every new project starts
// with.
type SeededEnvironment struct {
	Name, Slug, Color string
	IsDefault         bool
}

// SeededEnvironments are the environments a new project is created with
// (docs/reference/identity.md, Projects and environments), in their order:
// Production (red), Staging (amber) and Development (green, the default).
// The server creates them; a plan for a project that does not exist yet
// knows from them what its creation brings.
func SeededEnvironments() []SeededEnvironment {
	return []SeededEnvironment{
		{Name: "Production", Slug: "production", Color: "#ef4444"},
		{Name: "Staging", Slug: "staging", Color: "#f59e0b"},
		{Name: "Development", Slug: "development", Color: "#22c55e", IsDefault: true},
	}
}

// Env is what a flag's check needs of the environment it is stored in.
type Env struct {
	// Segments are the environment's segment keys: a rule's segment_key
	// must name one.
	Segments map[string]bool
	// FlagTypes are the types of the environment's flags: an existing
	// prerequisite fixes the type of its required value (a missing one is
	// allowed; it is simply unsatisfied).
	FlagTypes map[string]eval.FlagType
}

// Flag checks what the API document cannot: values of the flag's type,
// complete rules, segment references of the environment, and
// prerequisites' required values of their flag's type.
func Flag(f eval.Flag, env Env) Problems {
	var p Problems
	if !Key(f.Key) {
		p.add("key", KeyRule)
	}
	switch f.FlagType {
	case eval.FlagTypeBoolean, eval.FlagTypeString, eval.FlagTypeInteger, eval.FlagTypeJSON:
	default:
		p.add("flag_type", "must be one of boolean, string, integer, json")
		return p // every value check below depends on the type
	}
	if r := f.RolloutPercentage; r != nil && (*r < 0 || *r > 100) {
		p.add("rollout_percentage", "must be between 0 and 100, or null for 100 percent")
	}
	value(&p, "default_value", f.FlagType, f.DefaultValue)
	value(&p, "disabled_value", f.FlagType, f.DisabledValue)
	for i, r := range f.Rules {
		field := fmt.Sprintf("rules.%d", i)
		if r.SegmentKey != nil && *r.SegmentKey != "" && !env.Segments[*r.SegmentKey] {
			p.add(field+".segment_key", "names no segment of this environment: %q", *r.SegmentKey)
		}
		ruleConditions(&p, field, r)
		value(&p, field+".variant", f.FlagType, r.Variant)
		ruleRollout(&p, field, r)
		if len(r.Variants) > 0 {
			// docs/reference/evaluation.md, Per-rule split.
			switch {
			case f.FlagType == eval.FlagTypeBoolean:
				p.add(field+".variants", "a boolean flag's rules cannot carry variants")
			case !IsNull(r.Variant):
				p.add(field+".variants", "cannot be given together with variant")
			}
			variants(&p, field+".variants", f.FlagType, r.Variants, true)
		}
	}
	variants(&p, "variants", f.FlagType, f.Variants, false)
	for i, pre := range f.Prerequisites {
		field := fmt.Sprintf("prerequisites.%d", i)
		switch {
		case !Key(pre.FlagKey):
			p.add(field+".flag_key", "must be a flag key")
		case pre.FlagKey == f.Key:
			p.add(field+".flag_key", "a flag cannot be its own prerequisite")
		case !IsNull(pre.RequiredValue):
			if t, ok := env.FlagTypes[pre.FlagKey]; ok {
				value(&p, field+".required_value", t, pre.RequiredValue)
			}
		}
	}
	for i, tag := range f.Tags {
		if n := utf8.RuneCountInString(tag); n == 0 || n > 100 {
			p.add(fmt.Sprintf("tags.%d", i), "must be 1 to 100 characters")
		}
	}
	return p
}

// Segment checks a segment's key, name and rules. A segment's rules cannot
// reference other segments (expansion is one level deep), nor carry a
// rollout or a split, which expansion takes from the referencing rule.
func Segment(key, name string, rules []eval.Rule) Problems {
	var p Problems
	if !Key(key) {
		p.add("key", KeyRule)
	}
	if strings.TrimSpace(name) == "" {
		p.add("name", "is required")
	}
	for i, r := range rules {
		field := fmt.Sprintf("rules.%d", i)
		if r.SegmentKey != nil && *r.SegmentKey != "" {
			p.add(field+".segment_key", "a segment's rules cannot reference segments")
			continue
		}
		ruleConditions(&p, field, r)
		if r.RolloutPercentage != nil {
			p.add(field+".rollout_percentage", "a segment's rules cannot carry a rollout")
		}
		if len(r.Variants) > 0 {
			p.add(field+".variants", "a segment's rules cannot carry variants")
		}
	}
	return p
}

// Rule checks one rule of a flag of type t without its environment: its
// conditions, rollout and split (the segment it may name is not looked
// up).
func Rule(field string, t eval.FlagType, r eval.Rule) Problems {
	var p Problems
	ruleConditions(&p, field, r)
	ruleRollout(&p, field, r)
	variants(&p, field+".variants", t, r.Variants, true)
	return p
}

// ruleConditions checks a rule's conditions (docs/reference/evaluation.md,
// Conditions and Rule validation): the top-level one, present when attribute
// is not empty, needs an operator and at least one value; each entry of
// conditions needs all three; and a rule needs some condition or a
// segment_key. Values of regex, semver_* and before/after must parse with the
// evaluator's own parsers, so that no rule is stored that could never match.
func ruleConditions(p *Problems, field string, r eval.Rule) {
	hasSegment := r.SegmentKey != nil && *r.SegmentKey != ""
	switch {
	case r.Attribute != "":
		condition(p, field, r.Operator, r.Values)
	case hasSegment:
		// Without an attribute a segment rule's operator and values are
		// not a condition; they were always ignored, and still are.
	case r.Operator != "" || len(r.Values) > 0:
		p.add(field+".attribute", "is required when operator or values are given")
	case len(r.Conditions) == 0 && r.Conditions == nil:
		p.add(field, "needs a condition (attribute, operator and values, or conditions) or a segment_key")
	}
	if r.Conditions != nil && len(r.Conditions) == 0 {
		p.add(field+".conditions", "must not be empty: leave it out for no further conditions")
	}
	for j, c := range r.Conditions {
		cf := fmt.Sprintf("%s.conditions.%d", field, j)
		if c.Attribute == "" {
			p.add(cf+".attribute", "is required")
		}
		condition(p, cf, c.Operator, c.Values)
	}
}

// condition checks one condition's operator and values; field is the rule
// or the conditions entry that holds them.
func condition(p *Problems, field string, op eval.Operator, values []string) {
	switch {
	case op == "":
		p.add(field+".operator", "is required")
		return
	case !Operator(op):
		p.add(field+".operator", "is not an operator: %q", op)
		return
	}
	if len(values) == 0 {
		p.add(field+".values", "needs at least one value")
	}
	for k, v := range values {
		if err := eval.CheckValue(op, v); err != nil {
			p.add(fmt.Sprintf("%s.values.%d", field, k), "%v", err)
		}
	}
}

// Operator reports whether op is an operator of docs/reference/evaluation.md,
// Operators.
func Operator(op eval.Operator) bool {
	switch op {
	case eval.OpEquals, eval.OpNotEquals, eval.OpContains, eval.OpStartsWith,
		eval.OpEndsWith, eval.OpGreaterThan, eval.OpGreaterThanOrEqual,
		eval.OpLessThan, eval.OpLessThanOrEqual,
		eval.OpNotIn, eval.OpNotContains, eval.OpRegex,
		eval.OpSemverEquals, eval.OpSemverGreaterThan, eval.OpSemverGreaterThanOrEqual,
		eval.OpSemverLessThan, eval.OpSemverLessThanOrEqual,
		eval.OpBefore, eval.OpAfter:
		return true
	}
	return false
}

// ruleRollout checks a rule's rollout_percentage
// (docs/reference/evaluation.md, Per-rule rollout).
func ruleRollout(p *Problems, field string, r eval.Rule) {
	if pct := r.RolloutPercentage; pct != nil && (*pct < 0 || *pct > 100) {
		p.add(field+".rollout_percentage", "must be between 0 and 100")
	}
}

// variants checks weighted variants, the flag's or a rule's: weights are
// not negative, values have the flag's type. A rule's weights must also sum
// to more than 0 (docs/reference/evaluation.md, Per-rule split); the flag's
// may all be 0, which means no variant applies
// (docs/reference/evaluation.md, Variant selection).
func variants(p *Problems, field string, t eval.FlagType, vs []eval.Variant, positiveTotal bool) {
	total := 0
	for i, v := range vs {
		vf := fmt.Sprintf("%s.%d", field, i)
		if v.Weight < 0 {
			p.add(vf+".weight", "must not be negative")
		} else {
			total += v.Weight
		}
		if IsNull(v.Value) && t != eval.FlagTypeJSON {
			p.add(vf+".value", "is required")
		}
		value(p, vf+".value", t, v.Value)
	}
	if positiveTotal && len(vs) > 0 && total <= 0 {
		p.add(field, "weights must sum to more than 0")
	}
}

// value reports a value that does not match the flag type: default,
// disabled, variant, rule-variant and required values must match
// (docs/reference/evaluation.md, Value types). An absent or null value means
// "unset" and always passes.
func value(p *Problems, field string, t eval.FlagType, v json.RawMessage) {
	if IsNull(v) {
		return
	}
	if !matchesType(t, v) {
		p.add(field, "must be a %s value", t)
	}
}

func matchesType(t eval.FlagType, v json.RawMessage) bool {
	var x any
	d := json.NewDecoder(bytes.NewReader(v))
	d.UseNumber()
	if err := d.Decode(&x); err != nil {
		return false
	}
	switch t {
	case eval.FlagTypeBoolean:
		_, ok := x.(bool)
		return ok
	case eval.FlagTypeString:
		_, ok := x.(string)
		return ok
	case eval.FlagTypeInteger:
		n, ok := x.(json.Number)
		if !ok {
			return false
		}
		f, err := n.Float64()
		// Integers must survive every SDK's number type: whole and within ±2^53.
		return err == nil && f == math.Trunc(f) && math.Abs(f) <= 1<<53
	case eval.FlagTypeJSON:
		return true
	}
	return false
}

// IsNull reports an absent value or JSON null: "unset".
func IsNull(v json.RawMessage) bool {
	t := bytes.TrimSpace(v)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
}
