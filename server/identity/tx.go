package identity

import (
	"context"
	"fmt"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/bus"
	"github.com/switchyard/switchyard/server/store"
)

// tx runs fn in one transaction of identity (see txV).
func (s *Service) tx(ctx context.Context, fn func(q *db.Queries) error) error {
	_, err := txV(ctx, s, func(q *db.Queries) (struct{}, error) { return struct{}{}, fn(q) })
	return err
}

// txV runs fn in one transaction, like store.WithTxV, and then ends every
// credential the transaction ended, whichever rows it deleted directly or
// through a cascade: an SDK key revoked, or gone with its environment or
// project; a token, session, membership or user deleted; a workspace role
// changed. Triggers record each one in the change log
// (migrations/00007_credential_log.sql); before committing, txV reads the ones
// this transaction wrote, and after the commit this instance forgets them
// before the caller answers, and publishes them so that every instance forgets
// them and ends their streams at once: revocations apply to the very next
// request anywhere (docs/reference/identity.md, Roles). Should the publish be
// lost, every instance still reads them from the change log within a poll.
//
// Every transaction of identity goes through here, so a future path that ends a
// credential needs nothing of its own.
func txV[T any](ctx context.Context, s *Service, fn func(q *db.Queries) (T, error)) (T, error) {
	var ended []bus.Event
	v, err := store.WithTxV(ctx, s.pool, func(q *db.Queries) (T, error) {
		v, err := fn(q)
		if err != nil {
			return v, err
		}
		rows, err := q.ListRevocationsInTransaction(ctx)
		if err != nil {
			return v, fmt.Errorf("list revoked credentials: %w", err)
		}
		ended = ended[:0] // a retried closure starts over
		for _, r := range rows {
			e := bus.Event{Op: bus.OpRevoke, Key: r.Key}
			if r.EnvironmentID != nil {
				e.EnvID = *r.EnvironmentID
			}
			ended = append(ended, e)
		}
		return v, nil
	})
	if err != nil || len(ended) == 0 {
		return v, err
	}
	for _, e := range ended {
		s.Invalidate(e)
	}
	s.publish(ctx, ended...)
	return v, nil
}
