package sdkgo

import (
	"encoding/json"
	"math"
	"time"

	"github.com/switchyard/switchyard/sdkgo/eval"
	"github.com/switchyard/switchyard/sdkgo/internal/events"
)

// Detail is an evaluation with its explanation.
type Detail struct {
	Value        any         // the flag's value; nil for a missing flag
	Reason       eval.Reason // why (FLAG_NOT_FOUND, RULE_MATCH, ROLLOUT_IN, …)
	RuleIndex    int         // the matching rule for RULE_MATCH, else -1
	VariantIndex int         // the chosen variant for VARIANT, else -1
}

// Detail evaluates a flag for a user locally and explains the result.
// attrs are used only here and never sent anywhere.
func (c *Client) Detail(flagKey, userKey string, attrs map[string]any) Detail {
	r := c.store.Snapshot().Evaluate(flagKey, userKey, attrs)
	if r.Reason != eval.ReasonFlagNotFound && c.cfg.impressions {
		imp := events.Impression{FlagKey: flagKey, Value: eval.RenderValue(r.Value), EvaluatedAt: time.Now().UTC()}
		if userKey != "" {
			imp.UserID = &userKey
		}
		c.queue.Impression(imp)
	}
	return Detail{Value: r.Value, Reason: r.Reason, RuleIndex: r.RuleIndex, VariantIndex: r.VariantIndex}
}

// value is what the typed methods return from: nothing for a missing flag
// (the evaluator's own answer, false, is for callers without a fallback).
func (c *Client) value(flagKey, userKey string, attrs map[string]any) any {
	d := c.Detail(flagKey, userKey, attrs)
	if d.Reason == eval.ReasonFlagNotFound {
		return nil
	}
	return d.Value
}

// Bool evaluates a boolean flag; fallback when the flag is missing or not
// boolean.
func (c *Client) Bool(flagKey, userKey string, attrs map[string]any, fallback bool) bool {
	if v, ok := c.value(flagKey, userKey, attrs).(bool); ok {
		return v
	}
	return fallback
}

// String evaluates a string flag; fallback when the flag is missing, not a
// string flag, or its value is null.
func (c *Client) String(flagKey, userKey string, attrs map[string]any, fallback string) string {
	if v, ok := c.value(flagKey, userKey, attrs).(string); ok {
		return v
	}
	return fallback
}

// Int evaluates an integer flag; fallback when the flag is missing, not a
// whole number, or null.
func (c *Client) Int(flagKey, userKey string, attrs map[string]any, fallback int64) int64 {
	if v, ok := AsInt(c.value(flagKey, userKey, attrs)); ok {
		return v
	}
	return fallback
}

// JSON evaluates a JSON flag: the value decoded as encoding/json does
// (maps, slices, float64, string, bool, nil); fallback when the flag is
// missing or its value is null.
func (c *Client) JSON(flagKey, userKey string, attrs map[string]any, fallback any) any {
	if v := c.value(flagKey, userKey, attrs); v != nil {
		return v
	}
	return fallback
}

// Track records a goal event for a user (the same user key the evaluations
// used), with a value such as revenue or duration. It never blocks.
func (c *Client) Track(userKey, eventKey string, value float64) {
	g := events.Goal{EventKey: eventKey, Value: &value, OccurredAt: time.Now().UTC()}
	if userKey != "" {
		g.UserID = &userKey
	}
	c.queue.Goal(g)
}

// AsInt converts an evaluated number to int64 when it is a whole number.
func AsInt(v any) (int64, bool) {
	switch n := v.(type) {
	case float64:
		if n == math.Trunc(n) && math.Abs(n) <= 1<<53 {
			return int64(n), true
		}
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	case int64:
		return n, true
	case int:
		return int64(n), true
	}
	return 0, false
}
