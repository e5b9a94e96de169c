// Package eval is Switchyard's one flag evaluator and the wire model of a flag. The server
// encodes stream and snapshot payloads from Flag, the Go SDK decodes them into it and
// evaluates with a Snapshot; both follow the evaluation rules of docs/reference/evaluation.md
// exactly, so that every consumer gives the same answer. It
// imports only the standard library and github.com/spaolacci/murmur3.
//
// # Use
//
// Compile the flags of an environment once, keep the *Snapshot in an atomic.Pointer, and
// evaluate against whatever snapshot is current:
//
//	var current atomic.Pointer[eval.Snapshot]
//	current.Store(eval.Compile(flags))                  // on connect / snapshot
//	current.Store(current.Load().Upsert(flag))          // on an UPSERT update
//	current.Store(current.Load().Delete(key))           // on a DELETE update
//	res := current.Load().Evaluate("new-checkout", "user-17", map[string]any{"plan": "pro"})
//	// res.Value, res.Reason, res.RuleIndex, res.VariantIndex
//
// The API in full:
//
//	func Compile(flags []Flag) *Snapshot
//	func (s *Snapshot) Upsert(f Flag) *Snapshot
//	func (s *Snapshot) Delete(key string) *Snapshot
//	func (s *Snapshot) Evaluate(flagKey, userKey string, attrs map[string]any) Result
//	func (s *Snapshot) Flag(key string) (Flag, bool)
//	func (s *Snapshot) Flags() []Flag
//	func (s *Snapshot) Len() int
//	func RenderValue(v any) string
//	func CheckValue(op Operator, value string) error   // write-time check of a rule value
//
// # Design
//
// A Snapshot is immutable. Flags are compiled once when they arrive: rule values that
// numeric operators compare are parsed to float64, values are decoded from JSON and boxed,
// the hash prefix flag_key + ":" is concatenated, operators become small integers, and
// prerequisites are resolved to pointers within the snapshot. Upsert and Delete copy the
// index, compile only the changed flag and re-link prerequisites, so a reader holding an older
// Snapshot is never affected. Evaluate therefore needs no lock, does no JSON work, and does
// not allocate for ordinary inputs: bucketing inputs are assembled in a stack buffer, and
// attribute values are read through type switches. (Builds with -race hash through murmur3's
// streaming hasher instead, which allocates; see murmur_race.go.)
//
// # Rules
//
// In order (docs/reference/evaluation.md, Evaluation order): a missing flag is false (FLAG_NOT_FOUND); prerequisites
// are checked first, recursively, with the same user and attributes (PREREQUISITE_FAILED);
// then is_enabled (DISABLED); then the rules, first match wins (RULE_MATCH); then the rollout
// (ROLLOUT_OUT); then a weighted variant (VARIANT) or default_value (ROLLOUT_IN when a
// percentage gated the user, DEFAULT when rollout_percentage is null). Boolean flags always
// return true or false; the disabled result of other flags is disabled_value, or null.
//
// Details fixed here once for every SDK (docs/reference/evaluation.md states each as a rule):
//
//   - Prerequisite chains: 10 hops are evaluated normally; the 11th hop, and any hop that
//     closes a cycle, is unsatisfied and fails the whole chain closed: every flag above it
//     gets PREREQUISITE_FAILED, even one whose required_value equals the disabled result.
//     A diamond (two paths to one flag) is not a cycle.
//   - A prerequisite without required_value is satisfied unless its evaluation ended in the
//     disabled result (PREREQUISITE_FAILED, DISABLED or ROLLOUT_OUT). required_value null
//     is a value: it is met by a prerequisite that evaluates to null.
//   - Attributes: an absent attribute and a nil value both count as lacking the attribute.
//     Maps, slices, NaN, infinities and other types have no text form and match no
//     operator, not even not_equals. Integers of every Go kind are written exactly; float64
//     in shortest decimal form without exponent (strconv 'f', -1), float32 likewise at 32
//     bits, negative zero as 0; json.Number through float64.
//   - Numbers: both sides of a numeric operator must be plain decimals
//     ([+-]?digits[.digits][e[+-]digits]); hexadecimal, underscores, Inf and NaN are not
//     numbers. Rule values that are not numbers are dropped at compile time.
//   - Invalid data that the API rejects is tolerated, never fatal: an unknown operator never
//     matches; rollout below 0 lets nobody in and above 100 everybody; negative weights count
//     as 0; a value that does not match the flag's type (a number for a string flag, 1.5 for
//     an integer flag, malformed JSON) evaluates as null; a flag type unknown to this SDK
//     returns values as json does, variants included.
//   - Rules (docs/reference/evaluation.md, Rules and Conditions): the top-level condition (when attribute is not empty) and
//     every entry of conditions must hold; a rule without any condition never matches.
//     regex, semver_* and before/after values are parsed at compile time, and one that does
//     not parse makes its condition never match. A rule's rollout_percentage gates with the
//     rollout bucket (users left out try the next rule); a rule's variants split with the
//     variant bucket over the rule's weights, and when they are all 0 the rule returns its
//     variant or default_value. regex against a number attribute allocates its text once.
//     Instants are those whose UTC year is 0000 to 9999.
//   - Values are decoded with encoding/json: numbers are float64 (integers beyond 2^53 lose
//     precision), objects map[string]any, arrays []any. Result values are shared between
//     evaluations and must not be modified.
package eval
