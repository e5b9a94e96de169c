package eval

import (
	"bytes"
	"encoding/json"
	"slices"
	"time"
)

// FlagType is the type of the values a flag returns (docs/reference/flags.md, Flag fields:
// flag_type).
type FlagType string

// The flag types (docs/reference/evaluation.md, Value types). A flag without flag_type is a
// boolean flag.
const (
	FlagTypeBoolean FlagType = "boolean"
	FlagTypeString  FlagType = "string"
	FlagTypeInteger FlagType = "integer"
	FlagTypeJSON    FlagType = "json"
)

// Operator is the comparison a targeting rule applies (docs/reference/evaluation.md,
// Operators).
type Operator string

// The text and numeric operators (docs/reference/evaluation.md, Operators). An operator
// not listed here or below never matches.
const (
	OpEquals             Operator = "equals"
	OpNotEquals          Operator = "not_equals"
	OpContains           Operator = "contains"
	OpStartsWith         Operator = "starts_with"
	OpEndsWith           Operator = "ends_with"
	OpGreaterThan        Operator = "greater_than"
	OpGreaterThanOrEqual Operator = "greater_than_or_equal"
	OpLessThan           Operator = "less_than"
	OpLessThanOrEqual    Operator = "less_than_or_equal"
)

// The set, pattern, version and instant operators (docs/reference/evaluation.md, Operators).
const (
	OpNotIn                    Operator = "not_in"
	OpNotContains              Operator = "not_contains"
	OpRegex                    Operator = "regex"
	OpSemverEquals             Operator = "semver_equals"
	OpSemverGreaterThan        Operator = "semver_greater_than"
	OpSemverGreaterThanOrEqual Operator = "semver_greater_than_or_equal"
	OpSemverLessThan           Operator = "semver_less_than"
	OpSemverLessThanOrEqual    Operator = "semver_less_than_or_equal"
	OpBefore                   Operator = "before"
	OpAfter                    Operator = "after"
)

// Flag is the wire form of a flag: the object the server sends in a stream UPSERT and in the
// snapshot array, segment-expanded. The server encodes those payloads from this type and the
// SDK decodes them into it, so its JSON tags are exactly those of the API's Flag object.
//
// Values that may be any JSON value (default_value, disabled_value, variant values, rule
// variants, required_value) are kept as raw JSON so that a round trip is lossless: in
// particular an absent required_value (nil) stays distinct from a JSON null ("null").
//
// Decoding applies the defaults of docs/reference/flags.md, Flag fields, to absent fields: flag_type boolean, empty
// rules, variants, prerequisites and tags. Encoding always writes every field of the API's Flag
// object (arrays as [], absent values as null), as the API schema requires them.
type Flag struct {
	Key               string          `json:"key"`
	EnvironmentID     string          `json:"environment_id"`
	IsEnabled         bool            `json:"is_enabled"`
	RolloutPercentage *int            `json:"rollout_percentage"`
	Description       *string         `json:"description"`
	Rules             []Rule          `json:"rules"`
	FlagType          FlagType        `json:"flag_type"`
	DefaultValue      json.RawMessage `json:"default_value"`
	DisabledValue     json.RawMessage `json:"disabled_value"`
	Variants          []Variant       `json:"variants"`
	Prerequisites     []Prerequisite  `json:"prerequisites"`
	Tags              []string        `json:"tags"`
	OwnerEmail        *string         `json:"owner_email"`
	ArchivedAt        *time.Time      `json:"archived_at"`
	// ClientSide makes the flag visible to client keys (docs/reference/flags.md,
	// Client-side flags); the evaluator ignores it.
	ClientSide bool      `json:"client_side"`
	Version    int64     `json:"version"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// Rule is a targeting rule (docs/reference/evaluation.md, Rules). SegmentKey is carried for
// the API's unexpanded flags but ignored by the evaluator: the server expands segments before
// flags reach an SDK. An empty attribute or operator is left out when encoding, as a rule that
// only references a segment has neither.
//
// The top-level Attribute/Operator/Values is one condition of the rule when Attribute is not
// empty; Conditions holds the others, and the rule matches when every condition holds.
// Conditions, RolloutPercentage and Variants are left out when absent (nil or empty), so that a
// rule with only the single top-level condition encodes exactly as it always did
// (docs/reference/evaluation.md, Wire form).
type Rule struct {
	Attribute  string   `json:"attribute,omitempty"`
	Operator   Operator `json:"operator,omitempty"`
	Values     []string `json:"values"`
	SegmentKey *string  `json:"segment_key,omitempty"`
	// Variant is the value a match returns for non-boolean flags. Absent (nil) or JSON null
	// means unset: the match returns default_value.
	Variant json.RawMessage `json:"variant,omitempty"`
	// Conditions are further conditions, ANDed with the top-level one
	// (docs/reference/evaluation.md, Conditions).
	Conditions []Condition `json:"conditions,omitempty"`
	// RolloutPercentage, when set, lets only users whose rollout bucket is below it match the
	// rule; the others go on to the next rule.
	RolloutPercentage *int `json:"rollout_percentage,omitempty"`
	// Variants, when not empty, are the weighted values a match chooses from (non-boolean
	// flags), with the flag's variant bucket.
	Variants []Variant `json:"variants,omitempty"`
}

// Condition is one condition of a rule: the attribute, compared with the operator to the
// values (docs/reference/evaluation.md, Conditions).
type Condition struct {
	Attribute string   `json:"attribute"`
	Operator  Operator `json:"operator"`
	Values    []string `json:"values"`
}

// Variant is a weighted variant (docs/reference/evaluation.md, Variant selection). Weights are
// relative: 6/3/1 behaves
// as 60/30/10.
type Variant struct {
	Weight int             `json:"weight"`
	Value  json.RawMessage `json:"value"`
}

// Prerequisite names a flag that must be satisfied first (docs/reference/evaluation.md,
// Prerequisites).
type Prerequisite struct {
	FlagKey string `json:"flag_key"`
	// RequiredValue is the value the prerequisite must evaluate to. Absent (nil) means the
	// prerequisite must only be enabled; JSON null ("null") requires the value null.
	RequiredValue json.RawMessage `json:"required_value,omitempty"`
}

// flagJSON has Flag's fields without its methods, so that the methods can delegate to the
// default encoding without recursing.
type flagJSON Flag

// UnmarshalJSON decodes a flag and applies the defaults of docs/reference/flags.md, Flag
// fields, to absent fields.
func (f *Flag) UnmarshalJSON(data []byte) error {
	// flag_type defaults to boolean (docs/reference/flags.md, Flag fields). Unmarshal leaves absent fields untouched, so
	// presetting the default is enough; a JSON null keeps it too.
	p := flagJSON{FlagType: FlagTypeBoolean}
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*f = Flag(p)
	f.normalize()
	f.compactValues()
	return nil
}

// MarshalJSON encodes a flag with every field of the API's Flag object present.
func (f Flag) MarshalJSON() ([]byte, error) {
	f = f.clone()
	f.normalize()
	return json.Marshal(flagJSON(f))
}

// normalize replaces nil slices by empty ones and an empty flag_type by boolean, the
// defaults of docs/reference/flags.md, Flag fields, so that decoded and constructed flags encode alike.
func (f *Flag) normalize() {
	if f.FlagType == "" {
		f.FlagType = FlagTypeBoolean
	}
	if f.Rules == nil {
		f.Rules = []Rule{}
	}
	for i := range f.Rules {
		r := &f.Rules[i]
		if r.Values == nil {
			r.Values = []string{}
		}
		// docs/reference/evaluation.md, Per-rule split: variants: [] is the same as no variants
		// and is returned absent; an empty
		// conditions array is no condition either. nil keeps both out of the encoding and
		// makes a decoded flag equal its own round trip.
		if len(r.Conditions) == 0 {
			r.Conditions = nil
		}
		for j := range r.Conditions {
			if r.Conditions[j].Values == nil {
				r.Conditions[j].Values = []string{}
			}
		}
		if len(r.Variants) == 0 {
			r.Variants = nil
		}
		for j := range r.Variants {
			if len(r.Variants[j].Value) == 0 {
				r.Variants[j].Value = nil
			}
		}
	}
	if f.Variants == nil {
		f.Variants = []Variant{}
	}
	// Empty raw JSON is not a JSON value; it encodes as null, like an absent value.
	if len(f.DefaultValue) == 0 {
		f.DefaultValue = nil
	}
	if len(f.DisabledValue) == 0 {
		f.DisabledValue = nil
	}
	for i := range f.Variants {
		if len(f.Variants[i].Value) == 0 {
			f.Variants[i].Value = nil
		}
	}
	if f.Prerequisites == nil {
		f.Prerequisites = []Prerequisite{}
	}
	if f.Tags == nil {
		f.Tags = []string{}
	}
}

// compactValues removes insignificant whitespace from the raw JSON values, so that a decoded
// flag equals the same flag decoded from its own encoding (which is compact).
func (f *Flag) compactValues() {
	f.DefaultValue = compactRaw(f.DefaultValue)
	f.DisabledValue = compactRaw(f.DisabledValue)
	for i := range f.Rules {
		f.Rules[i].Variant = compactRaw(f.Rules[i].Variant)
		for j := range f.Rules[i].Variants {
			f.Rules[i].Variants[j].Value = compactRaw(f.Rules[i].Variants[j].Value)
		}
	}
	for i := range f.Variants {
		f.Variants[i].Value = compactRaw(f.Variants[i].Value)
	}
	for i := range f.Prerequisites {
		f.Prerequisites[i].RequiredValue = compactRaw(f.Prerequisites[i].RequiredValue)
	}
}

func compactRaw(m json.RawMessage) json.RawMessage {
	if len(m) == 0 {
		return m
	}
	var b bytes.Buffer
	if err := json.Compact(&b, m); err != nil {
		return m
	}
	return json.RawMessage(b.Bytes())
}

// clone returns a deep copy, so that a snapshot never shares memory with its caller: a
// caller changing a Flag it passed in or got back cannot change what others evaluate.
func (f Flag) clone() Flag {
	c := f
	c.RolloutPercentage = clonePtr(f.RolloutPercentage)
	c.Description = clonePtr(f.Description)
	c.OwnerEmail = clonePtr(f.OwnerEmail)
	c.ArchivedAt = clonePtr(f.ArchivedAt)
	c.DefaultValue = cloneRaw(f.DefaultValue)
	c.DisabledValue = cloneRaw(f.DisabledValue)
	c.Tags = slices.Clone(f.Tags)
	if f.Rules != nil {
		c.Rules = make([]Rule, len(f.Rules))
		for i, r := range f.Rules {
			r.Values = slices.Clone(r.Values)
			r.SegmentKey = clonePtr(r.SegmentKey)
			r.Variant = cloneRaw(r.Variant)
			r.RolloutPercentage = clonePtr(r.RolloutPercentage)
			if r.Conditions != nil {
				r.Conditions = make([]Condition, len(f.Rules[i].Conditions))
				for j, cond := range f.Rules[i].Conditions {
					cond.Values = slices.Clone(cond.Values)
					r.Conditions[j] = cond
				}
			}
			r.Variants = cloneVariants(r.Variants)
			c.Rules[i] = r
		}
	}
	c.Variants = cloneVariants(f.Variants)
	if f.Prerequisites != nil {
		c.Prerequisites = make([]Prerequisite, len(f.Prerequisites))
		for i, p := range f.Prerequisites {
			p.RequiredValue = cloneRaw(p.RequiredValue)
			c.Prerequisites[i] = p
		}
	}
	return c
}

func cloneVariants(vs []Variant) []Variant {
	if vs == nil {
		return nil
	}
	c := make([]Variant, len(vs))
	for i, v := range vs {
		v.Value = cloneRaw(v.Value)
		c[i] = v
	}
	return c
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// cloneRaw copies raw JSON, keeping nil (absent) distinct from an empty value.
func cloneRaw(m json.RawMessage) json.RawMessage {
	if m == nil {
		return nil
	}
	return bytes.Clone(m)
}
