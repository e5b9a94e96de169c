package measure

import (
	"context"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/access"
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
	out, err := store.WithSnapshotV(ctx, s.pool, func(q *db.Queries) (T, error) {
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
	return out, store.AdaptError(err)
}
