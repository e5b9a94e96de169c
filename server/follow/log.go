package follow

import (
	"context"
	"fmt"
	"time"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/bus"
)

// changeLogRetention is how long the change log keeps entries: it only
// bridges delivery gaps, and an hour covers any outage an instance survives
// without a resync.
const changeLogRetention = time.Hour

// DBLog is the change log in PostgreSQL: triggers append every flag write
// and every ended credential (migrations/00004_change_log.sql,
// 00007_credential_log.sql).
type DBLog struct {
	q   *db.Queries
	now func() time.Time
}

var _ Log = (*DBLog)(nil)

// NewLog returns the change log read through conn; now is the clock that
// pruning measures age with (time.Now when nil).
func NewLog(conn db.DBTX, now func() time.Time) *DBLog {
	if now == nil {
		now = time.Now
	}
	return &DBLog{q: db.New(conn), now: now}
}

// LatestChangeSeq returns the newest change log position.
func (l *DBLog) LatestChangeSeq(ctx context.Context) (int64, error) {
	seq, err := l.q.GetLatestChangeSeq(ctx)
	if err != nil {
		return 0, fmt.Errorf("read change log position: %w", err)
	}
	return seq, nil
}

// ChangesSince returns up to limit change log entries after seq, oldest
// first. Revocations come as OpRevoke events naming the credential.
func (l *DBLog) ChangesSince(ctx context.Context, seq int64, limit int32) ([]Change, error) {
	rows, err := l.q.ListChangesSince(ctx, db.ListChangesSinceParams{AfterSeq: seq, RowLimit: limit})
	if err != nil {
		return nil, fmt.Errorf("read change log: %w", err)
	}
	out := make([]Change, 0, len(rows))
	for _, r := range rows {
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
		out = append(out, Change{Seq: r.Seq, Event: e})
	}
	return out, nil
}

// PruneChangeLog deletes change log entries older than an hour.
func (l *DBLog) PruneChangeLog(ctx context.Context) (int64, error) {
	n, err := l.q.PruneChangeLog(ctx, l.now().Add(-changeLogRetention))
	if err != nil {
		return 0, fmt.Errorf("prune change log: %w", err)
	}
	return n, nil
}
