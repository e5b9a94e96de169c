package eval_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard/switchyard/sdkgo/eval"
)

// fuzzBytes hands out fuzz input one decision at a time; an exhausted input reads as zeros,
// so every input builds some flag set.
type fuzzBytes []byte

func (b *fuzzBytes) next() int {
	if len(*b) == 0 {
		return 0
	}
	c := (*b)[0]
	*b = (*b)[1:]
	return int(c)
}

func (b *fuzzBytes) pick(n int) int { return b.next() % n }

// Small pools keep keys and values colliding often enough to reach interesting paths:
// prerequisites that exist, cycles, rules on attributes the user has.
var (
	fuzzKeys  = []string{"f0", "f1", "f2", "f3", "missing"}
	fuzzAttrs = []string{"a", "b", "c"}
	fuzzTypes = []eval.FlagType{eval.FlagTypeBoolean, eval.FlagTypeString, eval.FlagTypeInteger, eval.FlagTypeJSON, "", "float"}
	fuzzOps   = []eval.Operator{eval.OpEquals, eval.OpNotEquals, eval.OpContains, eval.OpStartsWith, eval.OpEndsWith, eval.OpGreaterThan, eval.OpGreaterThanOrEqual, eval.OpLessThan, eval.OpLessThanOrEqual,
		eval.OpNotIn, eval.OpNotContains, eval.OpRegex, eval.OpSemverEquals, eval.OpSemverGreaterThan, eval.OpSemverGreaterThanOrEqual, eval.OpSemverLessThan, eval.OpSemverLessThanOrEqual,
		eval.OpBefore, eval.OpAfter, "matches", ""}
	fuzzRaw    = []string{"", "null", "true", "false", `"on"`, `"off"`, `""`, "1", "1.0", "2.5", "-3", "1e400", `{"a":1}`, `[1,"x"]`, `{"a":`, `"unterminated`}
	fuzzValues = []string{"", "1", "1.5", "-2", "1e3", "abc", "true", "on", "0x10", "NaN", "Inf", " 3",
		"1.2.3", "v2.0.0-rc.1+b", "1.0.0-alpha.10", "9007199254740992.0.0", "^a.*$", "(", "[0-9]+",
		"2024-03-01T00:00:00Z", "2024-02-29T23:59:59.999999999+05:30", "1709251200000", "-1", "0000-01-01T00:00:00Z"}
)

// fuzzFlags builds up to four flags from the fuzz input.
func fuzzFlags(b *fuzzBytes, text string) []eval.Flag {
	n := 1 + b.pick(4)
	flags := make([]eval.Flag, n)
	for i := range flags {
		f := eval.Flag{
			Key:           fuzzKeys[i],
			IsEnabled:     b.pick(4) != 0,
			FlagType:      fuzzTypes[b.pick(len(fuzzTypes))],
			DefaultValue:  fuzzRawValue(b),
			DisabledValue: fuzzRawValue(b),
		}
		if p := b.next(); p%3 != 0 {
			f.RolloutPercentage = ptr(p%111 - 5) // invalid values outside 0..100 included
		}
		for range b.pick(4) {
			r := eval.Rule{Variant: fuzzRawValue(b)}
			// docs/reference/evaluation.md, Rules: a top-level condition (or none), further
			// conditions, a rule rollout (out-of-range values included) and a split (zero and
			// negative weights).
			if b.pick(4) != 0 {
				r.Attribute, r.Operator, r.Values = fuzzCondition(b, text)
			}
			for range b.pick(3) {
				var c eval.Condition
				c.Attribute, c.Operator, c.Values = fuzzCondition(b, text)
				r.Conditions = append(r.Conditions, c)
			}
			if p := b.next(); p%3 == 0 {
				r.RolloutPercentage = ptr(p%111 - 5)
			}
			for range b.pick(4) {
				r.Variants = append(r.Variants, eval.Variant{Weight: b.pick(5) - 1, Value: fuzzRawValue(b)})
			}
			f.Rules = append(f.Rules, r)
		}
		for range b.pick(4) {
			f.Variants = append(f.Variants, eval.Variant{Weight: b.pick(8) - 1, Value: fuzzRawValue(b)})
		}
		for range b.pick(3) {
			p := eval.Prerequisite{FlagKey: fuzzKeys[b.pick(len(fuzzKeys))]}
			if b.pick(2) == 0 {
				p.RequiredValue = fuzzRawValue(b)
			}
			f.Prerequisites = append(f.Prerequisites, p)
		}
		flags[i] = f
	}
	return flags
}

// fuzzCondition builds an attribute, an operator and values from the pools and the fuzzed text.
func fuzzCondition(b *fuzzBytes, text string) (string, eval.Operator, []string) {
	attr := fuzzAttrs[b.pick(len(fuzzAttrs))]
	op := fuzzOps[b.pick(len(fuzzOps))]
	var values []string
	for range b.pick(4) {
		if b.pick(4) == 0 {
			values = append(values, text)
		} else {
			values = append(values, fuzzValues[b.pick(len(fuzzValues))])
		}
	}
	return attr, op, values
}

func fuzzRawValue(b *fuzzBytes) json.RawMessage {
	s := fuzzRaw[b.pick(len(fuzzRaw))]
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

// fuzzAttributes gives each attribute a value of a type chosen by the input.
func fuzzAttributes(b *fuzzBytes, text string, num float64) map[string]any {
	attrs := map[string]any{}
	for _, name := range fuzzAttrs {
		switch b.pick(11) {
		case 0:
			continue // absent
		case 1:
			attrs[name] = nil
		case 2:
			attrs[name] = text
		case 3:
			attrs[name] = num
		case 4:
			attrs[name] = int64(num)
		case 5:
			attrs[name] = b.pick(2) == 0
		case 6:
			attrs[name] = json.Number(text)
		case 7:
			attrs[name] = map[string]any{"x": text}
		case 8:
			attrs[name] = []any{num}
		case 9:
			attrs[name] = float32(num)
		case 10:
			attrs[name] = uint8(b.next())
		}
	}
	return attrs
}

// checkType reports whether v has the type the flag type promises: booleans for boolean
// flags (also when disabled), otherwise the flag's JSON type or null.
func checkType(t eval.FlagType, v any) bool {
	switch t {
	case eval.FlagTypeBoolean, "":
		_, ok := v.(bool)
		return ok
	case eval.FlagTypeString:
		_, ok := v.(string)
		return ok || v == nil
	case eval.FlagTypeInteger:
		f, ok := v.(float64)
		return (ok && f == math.Trunc(f)) || v == nil
	}
	switch v.(type) {
	case nil, bool, string, float64, []any, map[string]any:
		return true
	}
	return false
}

// FuzzEvaluate feeds random flags, attributes and keys to the evaluator. It must never panic,
// must give the same result twice, must return a value of the flag's type (or null), and a
// higher rollout percentage must never remove a user (docs/reference/code-style.md, §10
// Testing; docs/reference/evaluation.md, Rollout).
func FuzzEvaluate(f *testing.F) {
	f.Add([]byte{}, "", "", 0.0, uint8(0))
	f.Add([]byte{3, 1, 1, 4, 5, 50, 2, 0, 0, 1, 2, 1, 3, 2, 4, 1, 0, 2, 1}, "user-1", "pro", 30.5, uint8(40))
	f.Add([]byte{2, 1, 0, 2, 3, 0, 0, 0, 0, 1, 0, 0, 1, 1, 7, 0}, "alice", "abc", math.Inf(1), uint8(99))
	f.Add([]byte("prerequisites and cycles: f0 -> f1 -> f0"), "ünïcødé", "1e3", math.NaN(), uint8(7))
	f.Add([]byte{1, 3, 3, 3, 3, 90, 0, 0, 3, 1, 0, 1, 1, 2, 7, 7, 7, 7}, "u", "", -0.0, uint8(1))
	// Rules with conditions of the new operators, rule rollouts and splits.
	f.Add([]byte{1, 1, 1, 4, 5, 50, 3, 4, 1, 0, 12, 3, 12, 13, 2, 1, 14, 2, 20, 21, 30, 3, 2, 4, 3, 1, 2, 6, 2, 2, 5, 9, 9, 9, 9, 9}, "user-7", "v1.2.3", 1.7e12, uint8(10))
	f.Add([]byte{2, 2, 1, 1, 4, 60, 2, 5, 1, 1, 17, 3, 19, 20, 22, 2, 1, 16, 2, 16, 17, 0, 4, 1, 1, 3, 0, 2, 1, 7, 7, 7, 7}, "u-2", "2024-03-01T00:00:00Z", -1.5, uint8(50))
	f.Fuzz(func(t *testing.T, data []byte, userKey, text string, num float64, raise uint8) {
		b := fuzzBytes(data)
		flags := fuzzFlags(&b, text)
		attrs := fuzzAttributes(&b, text, num)
		snap := eval.Compile(flags)

		for _, key := range fuzzKeys {
			got := snap.Evaluate(key, userKey, attrs)
			if again := snap.Evaluate(key, userKey, attrs); !cmp.Equal(got, again) {
				t.Fatalf("Evaluate(%q) is not deterministic: %+v then %+v", key, got, again)
			}
			f, ok := snap.Flag(key)
			if !ok {
				if got.Reason != eval.ReasonFlagNotFound || got.Value != false {
					t.Fatalf("Evaluate(%q) of a missing flag = %+v", key, got)
				}
				continue
			}
			if !checkType(f.FlagType, got.Value) {
				t.Fatalf("Evaluate(%q) of a %q flag returned %#v (%T)", key, f.FlagType, got.Value, got.Value)
			}
			// VariantIndex is set for a flag variant, or for a rule's split
			// (docs/reference/evaluation.md, Per-rule split).
			if (got.Reason == eval.ReasonRuleMatch) != (got.RuleIndex >= 0) ||
				(got.Reason == eval.ReasonVariant && got.VariantIndex < 0) ||
				(got.VariantIndex >= 0 && got.Reason != eval.ReasonVariant && got.Reason != eval.ReasonRuleMatch) {
				t.Fatalf("Evaluate(%q) = %+v: indices do not fit the reason", key, got)
			}

			// A user inside the rollout at p stays inside, with the same result, at any higher p.
			if f.RolloutPercentage == nil || *f.RolloutPercentage < 0 || *f.RolloutPercentage > 100 {
				continue
			}
			if got.Reason != eval.ReasonRolloutIn && got.Reason != eval.ReasonVariant {
				continue
			}
			higher := f
			higher.RolloutPercentage = ptr(min(100, *f.RolloutPercentage+int(raise)))
			if r := snap.Upsert(higher).Evaluate(key, userKey, attrs); !cmp.Equal(got, r) {
				t.Fatalf("Evaluate(%q): %+v at %d%%, but %+v at %d%%", key, got, *f.RolloutPercentage, r, *higher.RolloutPercentage)
			}
		}
	})
}
