package core

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/sdkgo/eval"
)

// SDKFlags returns every flag of an environment in the form SDK clients
// receive, segment-expanded (spec, What the service does 8). Stream
// bootstraps and snapshots read it; callers authenticate first.
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

// expandFlag replaces every rule that references a segment by that
// segment's rules, in place and in order. The referencing rule's variant
// propagates to the segment rules that carry none of their own (spec,
// TargetingRule: variant). A reference to a missing segment expands to no
// rules, which is what a deleted segment leaves behind.
func expandFlag(f eval.Flag, segments map[string][]eval.Rule) eval.Flag {
	expanded := make([]eval.Rule, 0, len(f.Rules))
	for _, r := range f.Rules {
		if r.SegmentKey == nil || *r.SegmentKey == "" {
			r.SegmentKey = nil
			expanded = append(expanded, r)
			continue
		}
		for _, sr := range segments[*r.SegmentKey] {
			sr.SegmentKey = nil
			if nullToNil(sr.Variant) == nil {
				sr.Variant = r.Variant
			}
			expanded = append(expanded, sr)
		}
	}
	f.Rules = expanded
	return f
}
