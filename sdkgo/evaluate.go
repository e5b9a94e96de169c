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
		c.report(flagKey, userKey, eval.RenderValue(r.Value))
	}
	return Detail{Value: r.Value, Reason: r.Reason, RuleIndex: r.RuleIndex, VariantIndex: r.VariantIndex}
}

// report reports one evaluation exactly once (docs/reference/measurement.md,
// Reporting once): as an impression when the client does not remember
// reporting its (flag, user, value), as a summary count otherwise.
//
// Anonymous evaluations (no user key) are always summary counts: the
// statistics an anonymous impression feeds (totals, true/false counts,
// last seen, exposure impressions and timeline) are exactly the ones a
// summary feeds, and it feeds none of the per-user ones (unique users,
// first exposures, experiments), so an impression would only add a row.
func (c *Client) report(flagKey, userKey, value string) {
	if userKey == "" {
		c.queue.Summarise(flagKey, value, now())
		return
	}
	var at time.Time
	var seen bool
	c.seen.Observe(c.seen.KeyOf(flagKey, userKey, value), func(s bool) bool {
		// The time is read under the triple's lock, so the impression of a
		// triple is never later than an evaluation summarised after it.
		at, seen = now(), s
		if s {
			return false
		}
		user := userKey
		// Remembered only when queued: a dropped impression leaves the
		// triple new, so the user is recorded at its next evaluation.
		return c.queue.Impression(events.Impression{FlagKey: flagKey, UserID: &user, Value: value, EvaluatedAt: at})
	})
	if seen {
		c.queue.Summarise(flagKey, value, at)
	}
}

// forget is called with impressions the server never accepted: their
// triples are forgotten so that the next evaluation records the user.
func (c *Client) forget(imps []events.Impression) {
	for _, i := range imps {
		if i.UserID != nil {
			c.seen.Forget(c.seen.KeyOf(i.FlagKey, *i.UserID, i.Value))
		}
	}
}

// now is an evaluation's time, at the microsecond precision the server
// stores: the UTC day a summary is filed under is then the day the server
// files its evaluations under, even in the last microsecond of a day.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

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
	g := events.Goal{EventKey: eventKey, Value: &value, OccurredAt: now()}
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
