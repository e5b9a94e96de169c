package eval

const (
	// maxPrerequisiteDepth is the number of prerequisite hops evaluated normally.
	// docs/reference/evaluation.md, Depth limit: a chain of 10 hops is evaluated normally; the
	// 11th hop is unsatisfied (fail closed).
	maxPrerequisiteDepth = 10

	// variantSalt ends the variant bucketing input. docs/reference/evaluation.md, Buckets: the
	// variant bucket hashes flag_key + ":" + user_key + ":variant", independent of the rollout hash.
	variantSalt = ":variant"

	// hashBufSize is the stack buffer for a bucketing input. Flag keys have at most 100
	// characters, so ordinary user keys fit; longer inputs spill to the heap (one allocation)
	// and hash identically.
	hashBufSize = 256
)

// Reason says why an evaluation returned its value, for debugging and for OpenFeature.
type Reason string

// The reasons an evaluation can end with, one per exit of the evaluation order
// (docs/reference/evaluation.md, Evaluation order).
const (
	// ReasonFlagNotFound means that no flag has the key (step 1); the value is false.
	ReasonFlagNotFound Reason = "FLAG_NOT_FOUND"
	// ReasonPrerequisiteFailed means that a prerequisite is unsatisfied (step 2); the value
	// is the disabled result.
	ReasonPrerequisiteFailed Reason = "PREREQUISITE_FAILED"
	// ReasonDisabled means that is_enabled is false (step 3); the value is the disabled result.
	ReasonDisabled Reason = "DISABLED"
	// ReasonRuleMatch means that the targeting rule at Result.RuleIndex matched (step 4).
	ReasonRuleMatch Reason = "RULE_MATCH"
	// ReasonRolloutOut means that the user is outside rollout_percentage (step 5); the value
	// is the disabled result.
	ReasonRolloutOut Reason = "ROLLOUT_OUT"
	// ReasonRolloutIn means that the user is inside a rollout_percentage of 1 to 100 and gets
	// default_value, true for boolean flags (step 6).
	ReasonRolloutIn Reason = "ROLLOUT_IN"
	// ReasonVariant means that the weighted variant at Result.VariantIndex was chosen (step 6).
	ReasonVariant Reason = "VARIANT"
	// ReasonDefault means that rollout_percentage is null and no variant applies; the value
	// is default_value, true for boolean flags (step 6).
	ReasonDefault Reason = "DEFAULT"
)

// Result is the outcome of one evaluation.
type Result struct {
	// Value is true or false for boolean flags. For the other types it is the decoded JSON
	// value (string, float64, bool, []any, map[string]any) or nil for JSON null. It is
	// shared by every evaluation of the same flag version: callers must not modify maps or
	// slices in it.
	Value any
	// Reason says which evaluation rule produced Value.
	Reason Reason
	// RuleIndex is the index of the matching rule with ReasonRuleMatch, otherwise -1.
	RuleIndex int
	// VariantIndex is the index of the chosen variant: in the flag's variants with
	// ReasonVariant, in the matching rule's variants with ReasonRuleMatch when the rule splits
	// its users (docs/reference/evaluation.md, Per-rule split), otherwise -1.
	VariantIndex int
}

var notFound = Result{Value: false, Reason: ReasonFlagNotFound, RuleIndex: -1, VariantIndex: -1}

// Evaluate evaluates the flag flagKey for the user userKey (the empty string for an anonymous
// evaluation) with the user's attributes, following the rules of docs/reference/evaluation.md
// exactly. It never fails: a missing flag gives false with ReasonFlagNotFound, and data it
// cannot use does not match. It performs no allocation for ordinary inputs and is safe for
// concurrent use. A nil Snapshot holds no flags.
func (s *Snapshot) Evaluate(flagKey, userKey string, attrs map[string]any) Result {
	if s == nil {
		return notFound
	}
	n := s.byKey[flagKey]
	if n == nil {
		// Unknown flag (docs/reference/evaluation.md, Evaluation order): the result is false.
		return notFound
	}
	if len(n.links) == 0 {
		// Without prerequisites there is no chain to track.
		r, _ := evaluate(n, userKey, attrs, nil, 0)
		return r
	}
	var path [maxPrerequisiteDepth + 1]*node
	path[0] = n
	r, _ := evaluate(n, userKey, attrs, &path, 0)
	return r
}

// evaluate evaluates n, found at depth hops below the flag asked for; path[:depth+1] holds the
// flags being evaluated, from the top down. The second result reports that a prerequisite
// chain below n ran into a cycle or over the depth limit: both are unsatisfied and fail closed
// (docs/reference/evaluation.md, Depth limit), so that chain fails every flag above it,
// whatever required_value they expect from it.
func evaluate(n *node, userKey string, attrs map[string]any, path *[maxPrerequisiteDepth + 1]*node, depth int) (Result, bool) {
	// Prerequisites first (docs/reference/evaluation.md, Evaluation order), recursively,
	// before is_enabled, rules and rollout.
	for i, p := range n.links {
		if depth >= maxPrerequisiteDepth {
			// This would be hop maxPrerequisiteDepth+1, whatever it names.
			return n.disabled(ReasonPrerequisiteFailed), true
		}
		if p == nil {
			// A prerequisite naming a flag that does not exist is unsatisfied.
			return n.disabled(ReasonPrerequisiteFailed), false
		}
		if onPath(path[:depth+1], p) {
			return n.disabled(ReasonPrerequisiteFailed), true
		}
		path[depth+1] = p
		pr, broken := evaluate(p, userKey, attrs, path, depth+1)
		if broken || !n.prereqs[i].satisfiedBy(pr) {
			return n.disabled(ReasonPrerequisiteFailed), broken
		}
	}

	// The master switch (docs/reference/evaluation.md, Evaluation order).
	if !n.enabled {
		return n.disabled(ReasonDisabled), false
	}

	// Rules in order (docs/reference/evaluation.md, Evaluation order): the first match wins
	// and bypasses the rollout entirely, even at 0.
	if len(n.rules) > 0 {
		var i, j int
		if n.sharedAttrs {
			i, j = n.matchRulesCached(userKey, attrs)
		} else {
			i, j = n.matchRules(userKey, attrs, nil)
		}
		if i >= 0 {
			r := &n.rules[i]
			if j >= 0 {
				return Result{Value: r.variants[j].value, Reason: ReasonRuleMatch, RuleIndex: i, VariantIndex: j}, false
			}
			return Result{Value: r.value, Reason: ReasonRuleMatch, RuleIndex: i, VariantIndex: -1}, false
		}
	}

	// Rollout (docs/reference/evaluation.md, Rollout): null is 100 % without a gate; 0 lets nobody in
	// and 100 everybody, without hashing. Out-of-range values are invalid data (the API
	// answers 422): below 0 counts as 0, above 100 as 100.
	reason := ReasonDefault
	if n.hasRollout {
		switch {
		case n.rollout <= 0:
			return n.disabled(ReasonRolloutOut), false
		case n.rollout < 100:
			// docs/reference/evaluation.md, Buckets: bucket = murmur3(flag_key + ":" + user_key) % 100;
			// inside when bucket < rollout_percentage.
			if n.hash(userKey, "")%100 >= uint32(n.rollout) {
				return n.disabled(ReasonRolloutOut), false
			}
		}
		reason = ReasonRolloutIn
	}

	// A weighted variant, else default_value (docs/reference/evaluation.md, Variant
	// selection): bucket = murmur3(flag_key:user_key:variant) % W; the first variant whose cumulative
	// weight exceeds the bucket wins, so weight 0 is never chosen. totalWeight is 0 for
	// boolean flags, without variants, and when every weight is 0.
	if n.totalWeight > 0 {
		if i := pick(n.variants, uint64(n.hash(userKey, variantSalt))%n.totalWeight); i >= 0 {
			return Result{Value: n.variants[i].value, Reason: ReasonVariant, RuleIndex: -1, VariantIndex: i}, false
		}
	}
	return Result{Value: n.defaultValue, Reason: reason, RuleIndex: -1, VariantIndex: -1}, false
}

// matchRules applies the rules in order and returns the index of the first that matches and
// admits the user, and the index of the variant its split chose (-1 without one), or -1, -1
// (docs/reference/evaluation.md, Rules). cache, when not nil, remembers
// attributes that several conditions test. It returns indexes rather than a Result, which
// evaluate builds, so that no Result is copied on the way out.
func (n *compiledFlag) matchRules(userKey string, attrs map[string]any, cache *attrCache) (int, int) {
	for i := range n.rules {
		r := &n.rules[i]
		// docs/reference/evaluation.md, Rules: every condition must hold (they are ANDed). A rule without any
		// condition never matches: the API refuses one that references no segment either,
		// and an unexpanded segment rule must not match everyone. Written out here rather
		// than in a method: the call costs measurably in scenario b.
		matched := len(r.conds) > 0
		for j := range r.conds {
			if !r.conds[j].holds(attrs, cache) {
				matched = false
				break
			}
		}
		if !matched {
			continue
		}
		// docs/reference/evaluation.md, Per-rule rollout: a rule's rollout_percentage admits only users whose rollout
		// bucket is below it; those it leaves out go on to the next rule. 0 and 100 need no
		// hash; out-of-range values count as 0 and 100, like the flag's.
		if r.hasRollout && r.rollout < 100 {
			if r.rollout <= 0 || n.hash(userKey, "")%100 >= uint32(r.rollout) {
				continue
			}
		}
		// docs/reference/evaluation.md, Per-rule split: a split picks one of the rule's
		// variants with the flag's variant bucket, over the rule's own W.
		if r.totalWeight > 0 {
			return i, pick(r.variants, uint64(n.hash(userKey, variantSalt))%r.totalWeight)
		}
		return i, -1
	}
	return -1, -1
}

// matchRulesCached is matchRules with an attribute cache. The cache lives in this frame, not
// in evaluate's, so that evaluating a flag without shared attributes does not clear it: it
// holds pointers, and a frame holding it is cleared on every call.
//
//go:noinline
func (n *compiledFlag) matchRulesCached(userKey string, attrs map[string]any) (int, int) {
	var cache attrCache
	return n.matchRules(userKey, attrs, &cache)
}

// pick walks the variants by cumulative weight and returns the index of the first whose
// cumulative weight exceeds bucket (docs/reference/evaluation.md, Variant selection), so
// weight 0 is never chosen.
func pick(variants []compiledVariant, bucket uint64) int {
	var cumulative uint64
	for i := range variants {
		cumulative += variants[i].weight
		if bucket < cumulative {
			return i
		}
	}
	return -1
}

// disabled is the disabled result (docs/reference/evaluation.md, Disabled result): false for
// boolean flags, otherwise disabled_value (null when absent).
func (c *compiledFlag) disabled(reason Reason) Result {
	return Result{Value: c.disabledValue, Reason: reason, RuleIndex: -1, VariantIndex: -1}
}

// hash is MurmurHash3 x86 32-bit, seed 0, of the UTF-8 bytes of flag_key + ":" + userKey +
// salt (docs/reference/evaluation.md, Hashes). The input is assembled in a stack buffer, which sum32
// hashes in place, so that hashing does not allocate.
func (c *compiledFlag) hash(userKey, salt string) uint32 {
	var buf [hashBufSize]byte
	b := append(buf[:0], c.hashPrefix...)
	b = append(b, userKey...)
	b = append(b, salt...)
	return sum32(b)
}

func onPath(path []*node, n *node) bool {
	for _, p := range path {
		if p == n {
			return true
		}
	}
	return false
}

// satisfiedBy reports whether the prerequisite's evaluation result r satisfies it.
func (p *compiledPrereq) satisfiedBy(r Result) bool {
	if !p.hasRequired {
		// docs/reference/evaluation.md, Prerequisites: without required_value a prerequisite is satisfied
		// when its evaluation did not end in the disabled result.
		return r.Reason != ReasonPrerequisiteFailed && r.Reason != ReasonDisabled && r.Reason != ReasonRolloutOut
	}
	// docs/reference/evaluation.md, Prerequisites: otherwise it must evaluate to required_value, compared as JSON
	// values (1 equals 1.0; objects and arrays compare deeply).
	return jsonEqual(r.Value, p.required)
}

// jsonEqual compares two decoded JSON values without reflection or allocation.
func jsonEqual(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !jsonEqual(xv, yv) {
				return false
			}
		}
		return true
	}
	return false
}
