package core

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/sdkgo/eval"
	"github.com/switchyard/switchyard/sdkgo/eval/check"
	"github.com/switchyard/switchyard/server/apperr"
)

// validateFlag checks what the API document cannot (check.Flag) against
// the environment's segments and flag types. Flags reach it from the API,
// from merge patches, promotion, schedules and approvals alike.
func validateFlag(ctx context.Context, q *db.Queries, envID uuid.UUID, f eval.Flag) error {
	var env check.Env
	var err error
	if env.Segments, err = segmentKeys(ctx, q, envID); err != nil {
		return err
	}
	if len(f.Prerequisites) > 0 {
		if env.FlagTypes, err = flagTypes(ctx, q, envID); err != nil {
			return err
		}
	}
	return problems(check.Flag(f, env))
}

// problems is check's findings as one Invalid error, nil without any.
func problems(found check.Problems) error {
	var p apperr.Problems
	for _, x := range found {
		p.Add(x.Field, "%s", x.Message)
	}
	return p.Err()
}

func segmentKeys(ctx context.Context, q *db.Queries, envID uuid.UUID) (map[string]bool, error) {
	segs, err := q.ListSegments(ctx, envID)
	if err != nil {
		return nil, fmt.Errorf("list segments: %w", err)
	}
	keys := make(map[string]bool, len(segs))
	for _, s := range segs {
		keys[s.Key] = true
	}
	return keys, nil
}

func flagTypes(ctx context.Context, q *db.Queries, envID uuid.UUID) (map[string]eval.FlagType, error) {
	rows, err := q.ListFlagTypes(ctx, envID)
	if err != nil {
		return nil, fmt.Errorf("list flag types: %w", err)
	}
	types := make(map[string]eval.FlagType, len(rows))
	for _, r := range rows {
		types[r.Key] = eval.FlagType(r.FlagType)
	}
	return types, nil
}
