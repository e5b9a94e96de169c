package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/sdkgo/eval"
)

// SDKFlags returns every flag of an environment in the form SDK clients
// receive, segment-expanded (docs/reference/evaluation.md, Segment expansion).
// Stream bootstraps and snapshots read it; callers authenticate first.
func (s *Service) SDKFlags(ctx context.Context, envID uuid.UUID) ([]eval.Flag, error) {
	q := db.New(s.pool)
	segs, err := segmentRules(ctx, q, envID)
	if err != nil {
		return nil, err
	}
	rows, err := q.ListFlags(ctx, db.ListFlagsParams{EnvironmentID: envID})
	if err != nil {
		return nil, fmt.Errorf("list flags: %w", err)
	}
	out := make([]eval.Flag, 0, len(rows))
	for _, r := range rows {
		f, err := flagFromRow(r)
		if err != nil {
			return nil, err
		}
		out = append(out, expandFlag(f, segs))
	}
	return out, nil
}

// segmentRules maps an environment's segment keys to their rules.
func segmentRules(ctx context.Context, q *db.Queries, envID uuid.UUID) (map[string][]eval.Rule, error) {
	segs, err := q.ListSegments(ctx, envID)
	if err != nil {
		return nil, fmt.Errorf("list segments: %w", err)
	}
	out := make(map[string][]eval.Rule, len(segs))
	for _, sg := range segs {
		var rules []eval.Rule
		if err := json.Unmarshal(sg.Rules, &rules); err != nil {
			return nil, fmt.Errorf("decode segment %q: %w", sg.Key, err)
		}
		out[sg.Key] = rules
	}
	return out, nil
}

// expandFlag replaces every rule that references a segment by one rule per
// segment rule, in place and in the segment's order, so that evaluation stays
// first-match-wins (docs/reference/evaluation.md, Segment expansion). Each
// expanded rule keeps the segment rule's top-level condition and carries in
// conditions the segment rule's conditions, then the referencing rule's
// top-level condition and conditions; it takes the referencing rule's
// rollout_percentage, and the segment rule's own variant when it has one, else
// the referencing rule's variant or variants. On a boolean flag expanded rules
// carry no variant. A reference to a missing segment expands to no rules, which
// is what a deleted segment leaves behind.
func expandFlag(f eval.Flag, segments map[string][]eval.Rule) eval.Flag {
	expanded := make([]eval.Rule, 0, len(f.Rules))
	for _, r := range f.Rules {
		if r.SegmentKey == nil || *r.SegmentKey == "" {
			r.SegmentKey = nil
			expanded = append(expanded, r)
			continue
		}
		for _, sr := range segments[*r.SegmentKey] {
			expanded = append(expanded, expandRule(f.FlagType, r, sr))
		}
	}
	f.Rules = expanded
	return f
}

// expandRule is the rule that segment rule sr becomes under referencing rule
// r. It shares no slice with either, so the segments' rules stay as read.
func expandRule(t eval.FlagType, r, sr eval.Rule) eval.Rule {
	out := eval.Rule{
		Attribute:         sr.Attribute,
		Operator:          sr.Operator,
		Values:            sr.Values,
		RolloutPercentage: r.RolloutPercentage,
	}
	n := len(sr.Conditions) + len(r.Conditions)
	if r.Attribute != "" {
		n++
	}
	if n > 0 {
		out.Conditions = make([]eval.Condition, 0, n)
		out.Conditions = append(out.Conditions, sr.Conditions...)
		if r.Attribute != "" {
			out.Conditions = append(out.Conditions, eval.Condition{Attribute: r.Attribute, Operator: r.Operator, Values: r.Values})
		}
		out.Conditions = append(out.Conditions, r.Conditions...)
	}
	switch {
	case t == eval.FlagTypeBoolean:
		// A boolean flag's rules return true; no variant.
	case nullToNil(sr.Variant) != nil:
		out.Variant = sr.Variant
	case len(r.Variants) > 0:
		out.Variants = r.Variants
	default:
		out.Variant = r.Variant
	}
	return out
}

// SDKFlag returns one flag of an environment, segment-expanded, and whether
// it exists. Stream hubs re-read a flag this way when notified of a change.
func (s *Service) SDKFlag(ctx context.Context, envID uuid.UUID, key string) (eval.Flag, bool, error) {
	q := db.New(s.pool)
	row, err := q.GetFlag(ctx, db.GetFlagParams{EnvironmentID: envID, Key: key})
	if errors.Is(err, pgx.ErrNoRows) {
		return eval.Flag{}, false, nil
	}
	if err != nil {
		return eval.Flag{}, false, fmt.Errorf("get flag: %w", err)
	}
	f, err := flagFromRow(row)
	if err != nil {
		return eval.Flag{}, false, err
	}
	segs, err := segmentRules(ctx, q, envID)
	if err != nil {
		return eval.Flag{}, false, err
	}
	return expandFlag(f, segs), true, nil
}
