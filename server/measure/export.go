package measure

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/access"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/store"
)

// The raw export (docs/export.md) walks a time range's rows in id order, one
// short read at a time, so that memory stays flat and no connection or
// snapshot is held for the length of an export whose client may read slowly.
// Each read is bounded twice: at most exportBatch rows, and at most
// exportSpan ids past the previous read, so that a stretch of ids with few
// rows in the range (another environment's, or rows reported long after
// they were evaluated) costs a bounded read rather than one that scans on
// until it has found exportBatch rows.
const (
	exportBatch = 5000
	exportSpan  = 100_000
)

// Export is one raw export, authorized and bounded: Each walks its rows.
type Export[T any] struct {
	// first and last are the smallest and largest id of the range's rows
	// when the export began; rows is their number then (0: none).
	first, last, rows int64
	fetch             func(ctx context.Context, afterID, throughID int64, limit int32) ([]T, error)
	id                func(T) int64
}

// Rows is the number of rows in the range when the export began. Rows that
// arrive while it runs (reports of a recent range) may add to it.
func (e *Export[T]) Rows() int64 { return e.rows }

// Each calls fn with the export's rows in id order, a batch of at most
// 5,000 at a time, until the range is done, fn fails or ctx ends; the
// returned error is fn's, the database's or ctx's. The next batch is read
// while fn handles the current one, so at most three batches are held at
// once, whatever the size of the range.
func (e *Export[T]) Each(ctx context.Context, fn func([]T) error) error {
	if e.rows == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type batch struct {
		rows []T
		err  error
	}
	// The reader owns batches and closes the channel when it returns; the
	// consumer drains it after cancelling, so the reader never blocks on a
	// send nobody takes.
	batches := make(chan batch, 1)
	go func() {
		defer close(batches)
		after := e.first - 1
		for after < e.last {
			through := min(e.last, after+exportSpan)
			rows, err := e.fetch(ctx, after, through, exportBatch)
			if err != nil {
				select {
				case batches <- batch{err: store.AdaptError(err)}:
				case <-ctx.Done():
				}
				return
			}
			if len(rows) == exportBatch {
				after = e.id(rows[len(rows)-1]) // the read stopped at the limit, not at through
			} else {
				after = through
			}
			if len(rows) == 0 {
				continue
			}
			select {
			case batches <- batch{rows: rows}:
			case <-ctx.Done():
				return
			}
		}
	}()
	for b := range batches {
		err := b.err
		if err == nil {
			err = fn(b.rows)
		}
		if err != nil {
			cancel()
			for range batches {
			}
			return err
		}
	}
	return ctx.Err()
}

// ExportImpressions prepares the raw export of an environment's impressions
// evaluated in [from, to) (docs/reference/measurement.md, Raw export). It
// needs an editor or above (read_only tokens included) or a server SDK key
// of the environment, and from before to (422). Everything that can refuse
// the export happens here, before its first row: Each only reads.
func (s *Service) ExportImpressions(ctx context.Context, p *auth.Principal, envID uuid.UUID, from, to time.Time) (*Export[db.ListImpressionsForExportRow], error) {
	from, to = ceilMicro(from), ceilMicro(to)
	b, err := exportBounds(ctx, s, p, envID, from, to, func(q *db.Queries) (db.GetImpressionExportBoundsRow, error) {
		return q.GetImpressionExportBounds(ctx, db.GetImpressionExportBoundsParams{EnvironmentID: envID, FromAt: from, ToAt: to})
	})
	if err != nil {
		return nil, err
	}
	q := db.New(s.pool)
	return &Export[db.ListImpressionsForExportRow]{
		first: b.FirstID, last: b.LastID, rows: b.RowCount,
		fetch: func(ctx context.Context, afterID, throughID int64, limit int32) ([]db.ListImpressionsForExportRow, error) {
			return q.ListImpressionsForExport(ctx, db.ListImpressionsForExportParams{
				EnvironmentID: envID, AfterID: afterID, ThroughID: throughID, FromAt: from, ToAt: to, RowLimit: limit,
			})
		},
		id: func(r db.ListImpressionsForExportRow) int64 { return r.ID },
	}, nil
}

// ExportGoalEvents is ExportImpressions for goal events that occurred in
// [from, to).
func (s *Service) ExportGoalEvents(ctx context.Context, p *auth.Principal, envID uuid.UUID, from, to time.Time) (*Export[db.ListGoalEventsForExportRow], error) {
	from, to = ceilMicro(from), ceilMicro(to)
	b, err := exportBounds(ctx, s, p, envID, from, to, func(q *db.Queries) (db.GetImpressionExportBoundsRow, error) {
		r, err := q.GetGoalEventExportBounds(ctx, db.GetGoalEventExportBoundsParams{EnvironmentID: envID, FromAt: from, ToAt: to})
		return db.GetImpressionExportBoundsRow(r), err
	})
	if err != nil {
		return nil, err
	}
	q := db.New(s.pool)
	return &Export[db.ListGoalEventsForExportRow]{
		first: b.FirstID, last: b.LastID, rows: b.RowCount,
		fetch: func(ctx context.Context, afterID, throughID int64, limit int32) ([]db.ListGoalEventsForExportRow, error) {
			return q.ListGoalEventsForExport(ctx, db.ListGoalEventsForExportParams{
				EnvironmentID: envID, AfterID: afterID, ThroughID: throughID, FromAt: from, ToAt: to, RowLimit: limit,
			})
		},
		id: func(r db.ListGoalEventsForExportRow) int64 { return r.ID },
	}, nil
}

// exportBounds authorizes an export, checks its range and reads the bounds
// of its ids, in one snapshot.
func exportBounds(ctx context.Context, s *Service, p *auth.Principal, envID uuid.UUID, from, to time.Time, bounds func(q *db.Queries) (db.GetImpressionExportBoundsRow, error)) (db.GetImpressionExportBoundsRow, error) {
	out, err := store.WithSnapshotV(ctx, s.pool, func(q *db.Queries) (db.GetImpressionExportBoundsRow, error) {
		if _, err := access.Env(ctx, q, p, envID, access.EditorRead); err != nil {
			return db.GetImpressionExportBoundsRow{}, err
		}
		if !from.Before(to) {
			return db.GetImpressionExportBoundsRow{}, apperr.Field("to", "must be later than from")
		}
		return bounds(q)
	})
	return out, store.AdaptError(err)
}

// ceilMicro rounds t up to the microsecond, the precision of stored times.
// For a stored time x, x >= t exactly when x >= ceilMicro(t), and likewise
// for <, so the range stays exactly [from, to) whatever fraction a client
// sends; truncating instead would take in a row up to a microsecond early.
func ceilMicro(t time.Time) time.Time {
	c := t.Truncate(time.Microsecond)
	if c.Before(t) {
		c = c.Add(time.Microsecond)
	}
	return c
}
