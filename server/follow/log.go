package follow

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/bus"
	"github.com/switchyard/switchyard/server/store"
)

// changeLogRetention is how long the change log keeps entries: it only
// bridges delivery gaps, and an hour covers any outage an instance survives
// without a resync.
const changeLogRetention = time.Hour

// DBLog is the change log in PostgreSQL: triggers append every flag write
// and every ended credential (migrations/00004_change_log.sql,
// 00007_credential_log.sql). Its positions are snapshots: a read returns
// the entries of every transaction the previous position did not see, so
// an entry whose id was drawn before a larger one's, and committed after
// it, is never skipped.
type DBLog struct {
	pool *pgxpool.Pool
	now  func() time.Time
}

var _ Log = (*DBLog)(nil)

// NewLog returns the change log read through pool; now is the clock that
// pruning measures age with (time.Now when nil).
func NewLog(pool *pgxpool.Pool, now func() time.Time) *DBLog {
	if now == nil {
		now = time.Now
	}
	return &DBLog{pool: pool, now: now}
}

// Position returns the change log's position now.
func (l *DBLog) Position(ctx context.Context) (string, error) {
	snap, err := db.New(l.pool).GetChangeLogSnapshot(ctx)
	if err != nil {
		return "", fmt.Errorf("read change log position: %w", err)
	}
	return snap, nil
}

// ChangesSince returns every change log entry committed after pos, oldest
// id first, and the position after them. Revocations come as OpRevoke
// events naming the credential.
func (l *DBLog) ChangesSince(ctx context.Context, pos string) ([]Change, string, error) {
	type read struct {
		changes []Change
		pos     string
	}
	r, err := store.WithSnapshotV(ctx, l.pool, func(q *db.Queries) (read, error) {
		next, err := q.GetChangeLogSnapshot(ctx)
		if err != nil {
			return read{}, err
		}
		out := []Change{}
		after := int64(0)
		for {
			rows, err := q.ListChangesVisibleSince(ctx, db.ListChangesVisibleSinceParams{Since: pos, AfterSeq: after, RowLimit: pollBatch})
			if err != nil {
				return read{}, err
			}
			for _, r := range rows {
				out = append(out, Change{Seq: r.Seq, Event: eventOf(r)})
				after = r.Seq
			}
			if len(rows) < pollBatch {
				return read{changes: out, pos: next}, nil
			}
		}
	})
	if err != nil {
		return nil, pos, fmt.Errorf("read change log: %w", err)
	}
	return r.changes, r.pos, nil
}

func eventOf(r db.ListChangesVisibleSinceRow) bus.Event {
	e := bus.Event{Key: r.Key, Version: r.Version}
	if r.EnvironmentID != nil {
		e.EnvID = *r.EnvironmentID // credentials other than SDK keys belong to none
	}
	switch r.Kind {
	case "upsert":
		e.Op = bus.OpUpsert
	case "delete":
		e.Op = bus.OpDelete
	case "revoke":
		e.Op = bus.OpRevoke
	}
	return e
}

// PruneChangeLog deletes change log entries older than an hour.
func (l *DBLog) PruneChangeLog(ctx context.Context) (int64, error) {
	n, err := db.New(l.pool).PruneChangeLog(ctx, l.now().Add(-changeLogRetention))
	if err != nil {
		return 0, fmt.Errorf("prune change log: %w", err)
	}
	return n, nil
}
