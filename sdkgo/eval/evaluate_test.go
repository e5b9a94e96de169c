package eval_test

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard/switchyard/sdkgo/eval"
)

// TestEvaluateReasons pins the reason and indices of every exit of the evaluation rules. The
// shared vectors (sdkgo/testdata/vectors) pin the values; this test pins the rest of Result.
func TestEvaluateReasons(t *testing.T) {
	boolFlag := func(key string) eval.Flag { return eval.Flag{Key: key, IsEnabled: true} }
	str := func(key string) eval.Flag {
		return eval.Flag{Key: key, IsEnabled: true, FlagType: eval.FlagTypeString,
			DefaultValue: raw(`"on"`), DisabledValue: raw(`"off"`)}
	}
	with := func(f eval.Flag, change func(*eval.Flag)) eval.Flag { change(&f); return f }

	tests := []struct {
		name  string
		flags []eval.Flag
		key   string
		user  string
		attrs map[string]any
		want  eval.Result
	}{
		{
			name: "not found",
			key:  "missing",
			want: eval.Result{Value: false, Reason: eval.ReasonFlagNotFound, RuleIndex: -1, VariantIndex: -1},
		},
		{
			name:  "disabled boolean",
			flags: []eval.Flag{with(boolFlag("f"), func(f *eval.Flag) { f.IsEnabled = false })},
			key:   "f",
			want:  eval.Result{Value: false, Reason: eval.ReasonDisabled, RuleIndex: -1, VariantIndex: -1},
		},
		{
			name:  "disabled string",
			flags: []eval.Flag{with(str("f"), func(f *eval.Flag) { f.IsEnabled = false })},
			key:   "f",
			want:  eval.Result{Value: "off", Reason: eval.ReasonDisabled, RuleIndex: -1, VariantIndex: -1},
		},
		{
			name:  "default without rollout",
			flags: []eval.Flag{str("f")},
			key:   "f",
			want:  eval.Result{Value: "on", Reason: eval.ReasonDefault, RuleIndex: -1, VariantIndex: -1},
		},
		{
			name:  "boolean default without rollout",
			flags: []eval.Flag{boolFlag("f")},
			key:   "f",
			want:  eval.Result{Value: true, Reason: eval.ReasonDefault, RuleIndex: -1, VariantIndex: -1},
		},
		{
			name:  "rollout 100 is ROLLOUT_IN",
			flags: []eval.Flag{with(str("f"), func(f *eval.Flag) { f.RolloutPercentage = ptr(100) })},
			key:   "f",
			want:  eval.Result{Value: "on", Reason: eval.ReasonRolloutIn, RuleIndex: -1, VariantIndex: -1},
		},
		{
			name:  "rollout 0 is ROLLOUT_OUT",
			flags: []eval.Flag{with(str("f"), func(f *eval.Flag) { f.RolloutPercentage = ptr(0) })},
			key:   "f",
			want:  eval.Result{Value: "off", Reason: eval.ReasonRolloutOut, RuleIndex: -1, VariantIndex: -1},
		},
		{
			name:  "negative rollout (invalid data) lets nobody in",
			flags: []eval.Flag{with(boolFlag("f"), func(f *eval.Flag) { f.RolloutPercentage = ptr(-5) })},
			key:   "f",
			want:  eval.Result{Value: false, Reason: eval.ReasonRolloutOut, RuleIndex: -1, VariantIndex: -1},
		},
		{
			name:  "rollout above 100 (invalid data) lets everybody in",
			flags: []eval.Flag{with(boolFlag("f"), func(f *eval.Flag) { f.RolloutPercentage = ptr(250) })},
			key:   "f",
			want:  eval.Result{Value: true, Reason: eval.ReasonRolloutIn, RuleIndex: -1, VariantIndex: -1},
		},
		{
			name: "second rule matches at rollout 0",
			flags: []eval.Flag{with(str("f"), func(f *eval.Flag) {
				f.RolloutPercentage = ptr(0)
				f.Rules = []eval.Rule{
					{Attribute: "plan", Operator: eval.OpEquals, Values: []string{"free"}, Variant: raw(`"r0"`)},
					{Attribute: "plan", Operator: eval.OpEquals, Values: []string{"pro"}, Variant: raw(`"r1"`)},
				}
			})},
			key:   "f",
			attrs: map[string]any{"plan": "pro"},
			want:  eval.Result{Value: "r1", Reason: eval.ReasonRuleMatch, RuleIndex: 1, VariantIndex: -1},
		},
		{
			name: "single variant",
			flags: []eval.Flag{with(str("f"), func(f *eval.Flag) {
				f.Variants = []eval.Variant{{Weight: 0, Value: raw(`"never"`)}, {Weight: 7, Value: raw(`"always"`)}}
			})},
			key:  "f",
			want: eval.Result{Value: "always", Reason: eval.ReasonVariant, RuleIndex: -1, VariantIndex: 1},
		},
		{
			name: "all weights zero give the default with reason DEFAULT",
			flags: []eval.Flag{with(str("f"), func(f *eval.Flag) {
				f.Variants = []eval.Variant{{Weight: 0, Value: raw(`"a"`)}}
			})},
			key:  "f",
			want: eval.Result{Value: "on", Reason: eval.ReasonDefault, RuleIndex: -1, VariantIndex: -1},
		},
		{
			name: "negative weight (invalid data) is never chosen",
			flags: []eval.Flag{with(str("f"), func(f *eval.Flag) {
				f.Variants = []eval.Variant{{Weight: -3, Value: raw(`"neg"`)}, {Weight: 1, Value: raw(`"pos"`)}}
			})},
			key:  "f",
			want: eval.Result{Value: "pos", Reason: eval.ReasonVariant, RuleIndex: -1, VariantIndex: 1},
		},
		{
			name: "variants ignored on boolean flags",
			flags: []eval.Flag{with(boolFlag("f"), func(f *eval.Flag) {
				f.Variants = []eval.Variant{{Weight: 1, Value: raw(`false`)}}
				f.RolloutPercentage = ptr(100)
			})},
			key:  "f",
			want: eval.Result{Value: true, Reason: eval.ReasonRolloutIn, RuleIndex: -1, VariantIndex: -1},
		},
		{
			name: "prerequisite failed beats disabled",
			flags: []eval.Flag{
				with(str("f"), func(f *eval.Flag) {
					f.IsEnabled = false
					f.Prerequisites = []eval.Prerequisite{{FlagKey: "missing"}}
				}),
			},
			key:  "f",
			want: eval.Result{Value: "off", Reason: eval.ReasonPrerequisiteFailed, RuleIndex: -1, VariantIndex: -1},
		},
		{
			name: "prerequisite out of rollout is unsatisfied",
			flags: []eval.Flag{
				with(boolFlag("p"), func(f *eval.Flag) { f.RolloutPercentage = ptr(0) }),
				with(boolFlag("f"), func(f *eval.Flag) { f.Prerequisites = []eval.Prerequisite{{FlagKey: "p"}} }),
			},
			key:  "f",
			want: eval.Result{Value: false, Reason: eval.ReasonPrerequisiteFailed, RuleIndex: -1, VariantIndex: -1},
		},
		{
			name: "prerequisite matched by a rule is satisfied",
			flags: []eval.Flag{
				with(boolFlag("p"), func(f *eval.Flag) {
					f.RolloutPercentage = ptr(0)
					f.Rules = []eval.Rule{{Attribute: "beta", Operator: eval.OpEquals, Values: []string{"true"}}}
				}),
				with(boolFlag("f"), func(f *eval.Flag) { f.Prerequisites = []eval.Prerequisite{{FlagKey: "p"}} }),
			},
			key:   "f",
			attrs: map[string]any{"beta": true},
			want:  eval.Result{Value: true, Reason: eval.ReasonDefault, RuleIndex: -1, VariantIndex: -1},
		},
		{
			name: "required_value null is met by a disabled string flag without disabled_value",
			flags: []eval.Flag{
				{Key: "p", FlagType: eval.FlagTypeString},
				with(boolFlag("f"), func(f *eval.Flag) {
					f.Prerequisites = []eval.Prerequisite{{FlagKey: "p", RequiredValue: raw(`null`)}}
				}),
			},
			key:  "f",
			want: eval.Result{Value: true, Reason: eval.ReasonDefault, RuleIndex: -1, VariantIndex: -1},
		},
		{
			name: "absent required_value is not null: a disabled prerequisite fails",
			flags: []eval.Flag{
				{Key: "p", FlagType: eval.FlagTypeString},
				with(boolFlag("f"), func(f *eval.Flag) { f.Prerequisites = []eval.Prerequisite{{FlagKey: "p"}} }),
			},
			key:  "f",
			want: eval.Result{Value: false, Reason: eval.ReasonPrerequisiteFailed, RuleIndex: -1, VariantIndex: -1},
		},
		{
			name: "malformed required_value (invalid data) is never met",
			flags: []eval.Flag{
				{Key: "p", FlagType: eval.FlagTypeString},
				with(boolFlag("f"), func(f *eval.Flag) {
					f.Prerequisites = []eval.Prerequisite{{FlagKey: "p", RequiredValue: raw(`{"a":`)}}
				}),
			},
			key:  "f",
			want: eval.Result{Value: false, Reason: eval.ReasonPrerequisiteFailed, RuleIndex: -1, VariantIndex: -1},
		},
		{
			name: "empty required_value counts as absent",
			flags: []eval.Flag{
				boolFlag("p"),
				with(boolFlag("f"), func(f *eval.Flag) {
					f.Prerequisites = []eval.Prerequisite{{FlagKey: "p", RequiredValue: json.RawMessage{}}}
				}),
			},
			key:  "f",
			want: eval.Result{Value: true, Reason: eval.ReasonDefault, RuleIndex: -1, VariantIndex: -1},
		},
		{
			name:  "value of the wrong type (invalid data) evaluates as null",
			flags: []eval.Flag{{Key: "f", IsEnabled: true, FlagType: eval.FlagTypeString, DefaultValue: raw(`42`)}},
			key:   "f",
			want:  eval.Result{Value: nil, Reason: eval.ReasonDefault, RuleIndex: -1, VariantIndex: -1},
		},
		{
			name:  "fractional integer value (invalid data) evaluates as null",
			flags: []eval.Flag{{Key: "f", IsEnabled: true, FlagType: eval.FlagTypeInteger, DefaultValue: raw(`1.5`)}},
			key:   "f",
			want:  eval.Result{Value: nil, Reason: eval.ReasonDefault, RuleIndex: -1, VariantIndex: -1},
		},
		{
			name:  "malformed JSON value (invalid data) evaluates as null",
			flags: []eval.Flag{{Key: "f", IsEnabled: true, FlagType: eval.FlagTypeJSON, DefaultValue: raw(`{"a":`)}},
			key:   "f",
			want:  eval.Result{Value: nil, Reason: eval.ReasonDefault, RuleIndex: -1, VariantIndex: -1},
		},
		{
			name:  "unknown flag type returns values as json does",
			flags: []eval.Flag{{Key: "f", IsEnabled: true, FlagType: "float", DefaultValue: raw(`1.5`)}},
			key:   "f",
			want:  eval.Result{Value: 1.5, Reason: eval.ReasonDefault, RuleIndex: -1, VariantIndex: -1},
		},
		{
			name: "integer value written 5.0 is 5",
			flags: []eval.Flag{{Key: "f", IsEnabled: true, FlagType: eval.FlagTypeInteger,
				DefaultValue: raw(`5.0`)}},
			key:  "f",
			want: eval.Result{Value: 5.0, Reason: eval.ReasonDefault, RuleIndex: -1, VariantIndex: -1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := eval.Compile(tt.flags).Evaluate(tt.key, tt.user, tt.attrs)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Evaluate(%q) mismatch (-want +got):\n%s", tt.key, diff)
			}
		})
	}
}

// TestPrerequisiteDepth checks the depth limit (docs/reference/evaluation.md, Depth limit) on
// chains built in code: n hops from the
// flag asked for to the last flag.
func TestPrerequisiteDepth(t *testing.T) {
	chain := func(hops int, required json.RawMessage) []eval.Flag {
		flags := make([]eval.Flag, hops+1)
		for i := range flags {
			flags[i] = eval.Flag{Key: "c" + strconv.Itoa(i), IsEnabled: true}
			if i < hops {
				flags[i].Prerequisites = []eval.Prerequisite{{FlagKey: "c" + strconv.Itoa(i+1), RequiredValue: required}}
			}
		}
		return flags
	}
	tests := []struct {
		name     string
		hops     int
		required json.RawMessage
		want     eval.Reason
	}{
		{"1 hop", 1, nil, eval.ReasonDefault},
		{"10 hops", 10, nil, eval.ReasonDefault},
		{"10 hops requiring true", 10, raw(`true`), eval.ReasonDefault},
		{"11 hops", 11, nil, eval.ReasonPrerequisiteFailed},
		// Fail closed: the failure at the 11th hop is not turned into success by a hop that
		// expects the disabled value false.
		{"11 hops requiring false", 11, raw(`false`), eval.ReasonPrerequisiteFailed},
		{"30 hops", 30, nil, eval.ReasonPrerequisiteFailed},
	}
	t.Run("11th hop naming a missing flag", func(t *testing.T) {
		flags := chain(10, nil)
		flags[10].Prerequisites = []eval.Prerequisite{{FlagKey: "missing", RequiredValue: raw(`false`)}}
		if got := eval.Compile(flags).Evaluate("c0", "u", nil).Reason; got != eval.ReasonPrerequisiteFailed {
			t.Errorf("Evaluate(c0): reason %s, want PREREQUISITE_FAILED", got)
		}
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := eval.Compile(chain(tt.hops, tt.required)).Evaluate("c0", "u", nil)
			if got.Reason != tt.want {
				t.Errorf("Evaluate(c0) over %d hops: reason %s, want %s", tt.hops, got.Reason, tt.want)
			}
		})
	}
}

// TestOperatorsInGo covers what JSON vectors cannot express: Go attribute types, NaN and
// infinities, and the strict decimal number syntax.
func TestOperatorsInGo(t *testing.T) {
	tests := []struct {
		name   string
		op     eval.Operator
		values []string
		attr   any
		want   bool
	}{
		{"int equals", eval.OpEquals, []string{"30"}, 30, true},
		{"int8 equals", eval.OpEquals, []string{"-8"}, int8(-8), true},
		{"int16 equals", eval.OpEquals, []string{"300"}, int16(300), true},
		{"int32 equals", eval.OpEquals, []string{"70000"}, int32(70000), true},
		{"int64 exact beyond 2^53", eval.OpEquals, []string{"9007199254740993"}, int64(9007199254740993), true},
		{"uint equals", eval.OpEquals, []string{"5"}, uint(5), true},
		{"uint8 equals", eval.OpEquals, []string{"255"}, uint8(255), true},
		{"uint16 equals", eval.OpEquals, []string{"65535"}, uint16(65535), true},
		{"uint32 equals", eval.OpEquals, []string{"4000000000"}, uint32(4000000000), true},
		{"uint64 equals", eval.OpEquals, []string{"18446744073709551615"}, uint64(math.MaxUint64), true},
		{"uintptr equals", eval.OpEquals, []string{"12"}, uintptr(12), true},
		{"float32 shortest form", eval.OpEquals, []string{"0.1"}, float32(0.1), true},
		{"float64 shortest form", eval.OpEquals, []string{"0.1"}, 0.1, true},
		{"float64 never uses an exponent", eval.OpEquals, []string{"1000000000000000000000"}, 1e21, true},
		{"small float64 never uses an exponent", eval.OpEquals, []string{"0.000001"}, 1e-6, true},
		{"negative zero is 0", eval.OpEquals, []string{"0"}, math.Copysign(0, -1), true},
		{"json.Number normalised", eval.OpEquals, []string{"30"}, json.Number("30.0"), true},
		{"invalid json.Number has no text form", eval.OpEquals, []string{"abc"}, json.Number("abc"), false},
		{"NaN has no text form", eval.OpEquals, []string{"NaN"}, math.NaN(), false},
		{"NaN is not not_equals either", eval.OpNotEquals, []string{"x"}, math.NaN(), false},
		{"Inf has no text form", eval.OpEquals, []string{"+Inf"}, math.Inf(1), false},
		{"struct never matches", eval.OpEquals, []string{"{}"}, struct{}{}, false},
		{"map never matches not_equals", eval.OpNotEquals, []string{"x"}, map[string]any{}, false},
		{"slice never matches", eval.OpContains, []string{""}, []string{"a"}, false},
		{"greater_than int", eval.OpGreaterThan, []string{"10"}, 11, true},
		{"greater_than uint64", eval.OpGreaterThan, []string{"10"}, uint64(11), true},
		{"greater_than float32", eval.OpGreaterThan, []string{"1.5"}, float32(1.75), true},
		{"greater_than json.Number", eval.OpGreaterThan, []string{"10"}, json.Number("10.5"), true},
		{"greater_than NaN", eval.OpGreaterThan, []string{"0"}, math.NaN(), false},
		{"less_than -Inf", eval.OpLessThan, []string{"0"}, math.Inf(-1), false},
		{"less_than string -Inf", eval.OpLessThan, []string{"0"}, "-Inf", false},
		{"greater_than string NaN", eval.OpGreaterThan, []string{"0"}, "NaN", false},
		{"greater_than string Infinity", eval.OpGreaterThan, []string{"0"}, "Infinity", false},
		{"string overflowing float64", eval.OpGreaterThan, []string{"0"}, "1e400", false},
		{"rule value Inf is not a number", eval.OpLessThan, []string{"Inf"}, 5, false},
		{"hexadecimal string is not a number", eval.OpGreaterThan, []string{"1"}, "0x10", false},
		{"hexadecimal rule value is not a number", eval.OpLessThan, []string{"0x10"}, 5, false},
		{"signed hexadecimal is not a number", eval.OpLessThan, []string{"1"}, "-0x10", false},
		{"leading space is not a number", eval.OpGreaterThan, []string{"1"}, " 5", false},
		{"underscore is not a number", eval.OpGreaterThan, []string{"1"}, "1_000", false},
		{"plus sign is a number", eval.OpGreaterThan, []string{"1"}, "+5", true},
		{"leading dot is a number", eval.OpLessThan, []string{"1"}, ".5", true},
		{"trailing dot is a number", eval.OpGreaterThan, []string{"1"}, "5.", true},
		{"signed exponent is a number", eval.OpGreaterThan, []string{"1"}, "1e+5", true},
		{"capital exponent is a number", eval.OpLessThan, []string{"1"}, "1E-5", true},
		{"exponent without digits is not a number", eval.OpGreaterThan, []string{"1"}, "5e", false},
		{"exponent alone is not a number", eval.OpGreaterThan, []string{"1"}, "e5", false},
		{"lone dot is not a number", eval.OpLessThan, []string{"1"}, ".", false},
		{"lone sign is not a number", eval.OpLessThan, []string{"1"}, "-", false},
		{"trailing text is not a number", eval.OpGreaterThan, []string{"1"}, "5kg", false},
		{"lowercase nan is not a number", eval.OpGreaterThan, []string{"0"}, "nan", false},
		{"bool is not a number", eval.OpGreaterThanOrEqual, []string{"0"}, false, false},
		{"unknown operator", eval.Operator("matches_regex"), []string{".*"}, "x", false},
		{"empty operator", eval.Operator(""), []string{"x"}, "x", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := eval.Compile([]eval.Flag{{
				Key: "f", IsEnabled: true, RolloutPercentage: ptr(0),
				Rules: []eval.Rule{{Attribute: "a", Operator: tt.op, Values: tt.values}},
			}})
			got := snap.Evaluate("f", "u", map[string]any{"a": tt.attr}).Reason == eval.ReasonRuleMatch
			if got != tt.want {
				t.Errorf("%s %v against %v (%T): match %v, want %v", tt.op, tt.values, tt.attr, tt.attr, got, tt.want)
			}
		})
	}
}

// TestNilAndEmptySnapshot checks that a nil or zero Snapshot behaves as an empty one.
func TestNilAndEmptySnapshot(t *testing.T) {
	var nilSnap *eval.Snapshot
	want := eval.Result{Value: false, Reason: eval.ReasonFlagNotFound, RuleIndex: -1, VariantIndex: -1}
	for name, s := range map[string]*eval.Snapshot{"nil": nilSnap, "zero": {}, "compiled": eval.Compile(nil)} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(want, s.Evaluate("f", "u", nil)); diff != "" {
				t.Errorf("Evaluate mismatch (-want +got):\n%s", diff)
			}
			if s.Len() != 0 || len(s.Flags()) != 0 {
				t.Errorf("Len() = %d, Flags() = %v, want empty", s.Len(), s.Flags())
			}
			if _, ok := s.Flag("f"); ok {
				t.Error("Flag(f) found a flag in an empty snapshot")
			}
			if s.Delete("f").Len() != 0 {
				t.Error("Delete on an empty snapshot is not empty")
			}
			if got := s.Upsert(eval.Flag{Key: "f", IsEnabled: true}).Evaluate("f", "u", nil).Value; got != true {
				t.Errorf("after Upsert, Evaluate = %v, want true", got)
			}
		})
	}
}

// TestLongKeysHashLikeShortOnes checks the fallback for bucketing inputs beyond the stack
// buffer: the result must not depend on where the input was assembled.
func TestLongKeysHashLikeShortOnes(t *testing.T) {
	flagKey := strings.Repeat("k", 100)
	snap := eval.Compile([]eval.Flag{{
		Key: flagKey, IsEnabled: true, FlagType: eval.FlagTypeString, RolloutPercentage: ptr(50),
		Variants: []eval.Variant{{Weight: 1, Value: raw(`"a"`)}, {Weight: 1, Value: raw(`"b"`)}},
	}})
	seen := map[eval.Reason]bool{}
	for i := range 200 {
		user := strings.Repeat("u", 150+i) // crosses the 256-byte buffer around i = 5
		got := snap.Evaluate(flagKey, user, nil)
		if again := snap.Evaluate(flagKey, user, nil); got != again {
			t.Fatalf("user of %d bytes: %v then %v", len(user), got, again)
		}
		seen[got.Reason] = true
	}
	if !seen[eval.ReasonVariant] || !seen[eval.ReasonRolloutOut] {
		t.Errorf("200 long users all landed on one side: %v", seen)
	}
}
