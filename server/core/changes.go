package core

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/sdkgo/eval"
	"github.com/switchyard/switchyard/server/bus"
)

// changeLogRetention is how long the change log keeps entries (see
// migrations/00004_change_log.sql).
const changeLogRetention = time.Hour

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
	return expandFlag(f, segs), true, nil
}

// LatestChangeSeq returns the newest change log position.
func (s *Service) LatestChangeSeq(ctx context.Context) (int64, error) {
	return db.New(s.pool).GetLatestChangeSeq(ctx)
}

// Change is one entry of the change log, as a bus event.
type Change struct {
	Seq   int64
	Event bus.Event
}

// ChangesSince returns up to limit change log entries after seq, oldest
// first. Revocations come as OpRevoke events naming the credential.
func (s *Service) ChangesSince(ctx context.Context, seq int64, limit int32) ([]Change, error) {
	rows, err := db.New(s.pool).ListChangesSince(ctx, db.ListChangesSinceParams{AfterSeq: seq, RowLimit: limit})
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
func (s *Service) PruneChangeLog(ctx context.Context) (int64, error) {
	return db.New(s.pool).PruneChangeLog(ctx, s.now().Add(-changeLogRetention))
}
