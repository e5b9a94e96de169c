package identity

import (
	"context"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/store"
)

// tx runs fn in one transaction of identity (see txV).
func (s *Service) tx(ctx context.Context, fn func(q *db.Queries) error) error {
	_, err := txV(ctx, s, func(q *db.Queries) (struct{}, error) { return struct{}{}, fn(q) })
	return err
}

// txV runs fn in one transaction that may end credentials
// (store.WithTxEndingCredentials) and, after the commit, makes this
// instance forget the credentials it ended before the caller answers, and
// publishes them so that every instance forgets them and ends their streams
// at once. Every transaction of identity goes through here, so a future
// path that ends a credential needs nothing of its own.
func txV[T any](ctx context.Context, s *Service, fn func(q *db.Queries) (T, error)) (T, error) {
	v, ended, err := store.WithTxEndingCredentials(ctx, s.pool, fn)
	if err != nil || len(ended) == 0 {
		return v, err
	}
	for _, e := range ended {
		s.Invalidate(e)
	}
	s.publish(ctx, ended...)
	return v, nil
}
