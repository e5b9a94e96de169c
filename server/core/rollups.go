package core

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/store"
)

// Kinds of pending rollup.
const (
	rollupImpressions = "impressions"
	rollupEvents      = "events"
)

// foldBatch is how many pending batches (of up to 500 rows) one fold
// transaction applies, merged into one statement per environment.
const foldBatch = 40

// ingestBatch is the one ingest transaction: check that the caller may
// report to the environment (any reader, SDK keys included), copy the n
// rows, and record the batch's rollup input for the fold.
func (s *Service) ingestBatch(ctx context.Context, p *auth.Principal, envID uuid.UUID, n int, copyRows func(*db.Queries) error, kind string, roll any) error {
	err := store.WithTx(ctx, s.pool, func(q *db.Queries) error {
		if _, err := envAccess(ctx, q, p, envID, NeedRead); err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		if err := copyRows(q); err != nil {
			return err
		}
		return deferRollup(ctx, q, kind, roll)
	})
	return store.AdaptError(err)
}

// deferRollup records a batch's rollup input in the ingest transaction; the
// rollup itself is applied later by foldPending (migrations/00005).
func deferRollup(ctx context.Context, q *db.Queries, kind string, params any) error {
	raw, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("encode rollup: %w", err)
	}
	return q.InsertPendingRollup(ctx, db.InsertPendingRollupParams{Kind: kind, Params: raw})
}

// foldPending applies every pending rollup batch. Reads of the rollups call
// it first, so they reflect every acknowledged ingest; it waits for a fold
// in progress elsewhere (one advisory lock), so a batch is never applied
// twice and never missed.
func (s *Service) foldPending(ctx context.Context) error {
	for {
		n, err := s.foldOnce(ctx, true)
		if err != nil || n < foldBatch {
			return err
		}
	}
}

// foldOnce applies up to foldBatch pending batches in one transaction and
// reports how many. With wait false it gives up at once when another fold
// holds the lock (the background folder does that).
func (s *Service) foldOnce(ctx context.Context, wait bool) (int, error) {
	n, err := store.WithTxV(ctx, s.pool, func(q *db.Queries) (int, error) {
		if wait {
			if err := q.LockRollupFold(ctx); err != nil {
				return 0, err
			}
		} else if ok, err := q.TryLockRollupFold(ctx); err != nil || !ok {
			return 0, err
		}
		pending, err := q.ListPendingRollups(ctx, foldBatch)
		if err != nil {
			return 0, err
		}
		ids, err := applyMerged(ctx, q, pending)
		if err != nil {
			return 0, err
		}
		if len(ids) > 0 {
			if err := q.DeletePendingRollups(ctx, ids); err != nil {
				return 0, err
			}
		}
		return len(ids), nil
	})
	return n, store.AdaptError(err)
}

// applyMerged applies pending batches with one rollup statement per kind
// and environment: their arrays concatenated in ingest order. The rollup
// statements aggregate (sums, minimum and maximum times, first exposure by
// time then position), so the merged statement leaves exactly what applying
// the batches one by one would, for a fraction of the statements.
func applyMerged(ctx context.Context, q *db.Queries, pending []db.ListPendingRollupsRow) ([]int64, error) {
	imps := map[uuid.UUID]*db.RollUpImpressionsParams{}
	evs := map[uuid.UUID]*db.RollUpGoalEventsParams{}
	ids := make([]int64, 0, len(pending))
	for _, p := range pending {
		switch p.Kind {
		case rollupImpressions:
			var b db.RollUpImpressionsParams
			if err := json.Unmarshal(p.Params, &b); err != nil {
				return nil, fmt.Errorf("decode rollup %d: %w", p.ID, err)
			}
			m := imps[b.EnvironmentID]
			if m == nil {
				m = &db.RollUpImpressionsParams{EnvironmentID: b.EnvironmentID}
				imps[b.EnvironmentID] = m
			}
			m.DailyFlagKeys = append(m.DailyFlagKeys, b.DailyFlagKeys...)
			m.DailyValues = append(m.DailyValues, b.DailyValues...)
			m.DailyAts = append(m.DailyAts, b.DailyAts...)
			m.UserFlagKeys = append(m.UserFlagKeys, b.UserFlagKeys...)
			m.UserIds = append(m.UserIds, b.UserIds...)
			m.UserValues = append(m.UserValues, b.UserValues...)
			m.UserAts = append(m.UserAts, b.UserAts...)
		case rollupEvents:
			var b db.RollUpGoalEventsParams
			if err := json.Unmarshal(p.Params, &b); err != nil {
				return nil, fmt.Errorf("decode rollup %d: %w", p.ID, err)
			}
			m := evs[b.EnvironmentID]
			if m == nil {
				m = &db.RollUpGoalEventsParams{EnvironmentID: b.EnvironmentID}
				evs[b.EnvironmentID] = m
			}
			m.EventKeys = append(m.EventKeys, b.EventKeys...)
			m.OccurredAts = append(m.OccurredAts, b.OccurredAts...)
			m.UserEventKeys = append(m.UserEventKeys, b.UserEventKeys...)
			m.UserIds = append(m.UserIds, b.UserIds...)
			m.UserAts = append(m.UserAts, b.UserAts...)
		default:
			return nil, fmt.Errorf("rollup %d has unknown kind %q", p.ID, p.Kind)
		}
		ids = append(ids, p.ID)
	}
	// Environments in a fixed order, so concurrent statements (there are
	// none while the fold lock is held, but cheaply so) lock rows alike.
	for _, env := range sortedEnvs(imps) {
		if err := q.RollUpImpressions(ctx, *imps[env]); err != nil {
			return nil, fmt.Errorf("fold impressions: %w", err)
		}
	}
	for _, env := range sortedEnvs(evs) {
		if err := q.RollUpGoalEvents(ctx, *evs[env]); err != nil {
			return nil, fmt.Errorf("fold goal events: %w", err)
		}
	}
	return ids, nil
}

func sortedEnvs[T any](m map[uuid.UUID]T) []uuid.UUID {
	out := make([]uuid.UUID, 0, len(m))
	for id := range m {
		out = append(out, id)
	}
	slices.SortFunc(out, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	return out
}

// RunRollupFolder folds pending rollups in the background every interval
// until ctx ends, so that reads rarely have anything left to fold.
func (s *Service) RunRollupFolder(ctx context.Context, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for ctx.Err() == nil {
			n, err := s.foldOnce(ctx, false)
			if err != nil {
				if ctx.Err() == nil {
					s.logger.WarnContext(ctx, "fold rollups", slog.String("err", err.Error()))
				}
				break
			}
			if n < foldBatch {
				break
			}
		}
	}
}
