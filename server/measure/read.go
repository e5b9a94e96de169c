package measure

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/access"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/store"
)

// Reads never wait on the fold (docs/reference/measurement.md, Fresh reads). A
// read runs in one snapshot (store.WithSnapshotV) and combines the rollups,
// folded through each kind's watermark, with the raw rows after the watermark
// that the folder has not reached: those are exactly the committed, unfolded
// rows, because the folder advances a watermark only past ids that every ingest
// has committed (rollups.go) and moves rollups and watermark in one
// transaction. A read therefore sees every ingest acknowledged before it began,
// whatever the backlog, and pays for the tail with one index range scan of the
// raw rows instead of waiting for the tail to be folded; the background folder
// keeps that tail short.

// snapshotRead runs fn in one snapshot after checking that p may read the
// environment, handing it the watermarks of that snapshot.
func snapshotRead[T any](ctx context.Context, s *Service, p *auth.Principal, envID uuid.UUID, fn func(q *db.Queries, marks db.GetRollupWatermarksRow) (T, error)) (T, error) {
	rctx := ctx
	if s.readTimeout > 0 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(ctx, s.readTimeout)
		defer cancel()
	}
	out, err := store.WithSnapshotV(rctx, s.reads, func(q *db.Queries) (T, error) {
		var zero T
		if _, err := access.Env(ctx, q, p, envID, access.Read); err != nil {
			return zero, err
		}
		if err := q.SetMeasurementReadSettings(ctx); err != nil {
			return zero, err
		}
		marks, err := q.GetRollupWatermarks(ctx)
		if err != nil {
			return zero, err
		}
		return fn(q, marks)
	})
	if err != nil && ctx.Err() == nil && errors.Is(rctx.Err(), context.DeadlineExceeded) {
		return out, apperr.ReadTooSlow(err)
	}
	return out, store.AdaptError(err)
}
