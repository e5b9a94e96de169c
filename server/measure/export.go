package measure

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

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
//
// The walk's id range is bounded first. A range that covers at least half
// of the table's time (from its first row to its last, by id) walks the
// table's whole id range: bounding it exactly would read most of the table
// once before the first row, and the walk reads it anyway. A shorter range
// is bounded exactly, by the smallest and largest id of the environment's
// rows in it, which the block-range index on time finds reading little more
// than those rows. Either way the reads filter by time and environment, so
// the bounds decide only what the export costs, never which rows it holds.
const (
	exportBatch = 5000
	exportSpan  = 100_000
)

// Export is one raw export, authorized and bounded: Each walks its rows.
type Export[T any] struct {
	// first and last bound the ids of the range's rows; first > last when
	// the range has none.
	first, last int64
	fetch       func(ctx context.Context, afterID, throughID int64, limit int32) ([]T, error)
	id          func(T) int64
}

// Each calls fn with the export's rows in id order, a batch of at most
// 5,000 at a time, until the range is done, fn fails or ctx ends; the
// returned error is fn's, the database's or ctx's. The next batch is read
// while fn handles the current one, so at most three batches are held at
// once, whatever the size of the range.
func (e *Export[T]) Each(ctx context.Context, fn func([]T) error) error {
	if e.first > e.last {
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
	first, last, err := exportBounds(ctx, s, p, envID, from, to,
		func(q *db.Queries) (db.GetImpressionIDSpanRow, error) { return q.GetImpressionIDSpan(ctx) },
		func(q *db.Queries) (db.GetImpressionExportBoundsRow, error) {
			return q.GetImpressionExportBounds(ctx, db.GetImpressionExportBoundsParams{EnvironmentID: envID, FromAt: from, ToAt: to})
		})
	if err != nil {
		return nil, err
	}
	q := db.New(s.reads)
	return &Export[db.ListImpressionsForExportRow]{
		first: first, last: last,
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
	first, last, err := exportBounds(ctx, s, p, envID, from, to,
		func(q *db.Queries) (db.GetImpressionIDSpanRow, error) {
			r, err := q.GetGoalEventIDSpan(ctx)
			return db.GetImpressionIDSpanRow(r), err
		},
		func(q *db.Queries) (db.GetImpressionExportBoundsRow, error) {
			r, err := q.GetGoalEventExportBounds(ctx, db.GetGoalEventExportBoundsParams{EnvironmentID: envID, FromAt: from, ToAt: to})
			return db.GetImpressionExportBoundsRow(r), err
		})
	if err != nil {
		return nil, err
	}
	q := db.New(s.reads)
	return &Export[db.ListGoalEventsForExportRow]{
		first: first, last: last,
		fetch: func(ctx context.Context, afterID, throughID int64, limit int32) ([]db.ListGoalEventsForExportRow, error) {
			return q.ListGoalEventsForExport(ctx, db.ListGoalEventsForExportParams{
				EnvironmentID: envID, AfterID: afterID, ThroughID: throughID, FromAt: from, ToAt: to, RowLimit: limit,
			})
		},
		id: func(r db.ListGoalEventsForExportRow) int64 { return r.ID },
	}, nil
}

// exportBounds authorizes an export, checks its range and bounds its ids,
// in one snapshot: the table's whole id range when the time range covers
// most of the table's, else the exact bounds of the range's rows.
func exportBounds(ctx context.Context, s *Service, p *auth.Principal, envID uuid.UUID, from, to time.Time,
	span func(q *db.Queries) (db.GetImpressionIDSpanRow, error),
	exact func(q *db.Queries) (db.GetImpressionExportBoundsRow, error),
) (first, last int64, err error) {
	type ids struct{ first, last int64 }
	b, err := store.WithSnapshotV(ctx, s.reads, func(q *db.Queries) (ids, error) {
		if _, err := access.Env(ctx, q, p, envID, access.EditorRead); err != nil {
			return ids{}, err
		}
		if !from.Before(to) {
			return ids{}, apperr.Field("to", "must be later than from")
		}
		t, err := span(q)
		if errors.Is(err, pgx.ErrNoRows) {
			return ids{1, 0}, nil // an empty table
		}
		if err != nil {
			return ids{}, err
		}
		if coversMost(from, to, t.FirstAt, t.LastAt) {
			return ids{t.FirstID, t.LastID}, nil
		}
		r, err := exact(q)
		if err != nil || r.RowCount == 0 {
			return ids{1, 0}, err
		}
		return ids{r.FirstID, r.LastID}, nil
	})
	return b.first, b.last, store.AdaptError(err)
}

// coversMost reports whether [from, to) covers at least half of the time
// from first to last (a table's first and last rows, by id).
func coversMost(from, to, first, last time.Time) bool {
	lo, hi := from, to
	if first.After(lo) {
		lo = first
	}
	if last.Before(hi) {
		hi = last
	}
	return 2*hi.Sub(lo) >= last.Sub(first)
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
