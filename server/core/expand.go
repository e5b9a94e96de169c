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
		out = append(out, eval.ExpandSegments(f, segs))
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
	return eval.ExpandSegments(f, segs), true, nil
}
