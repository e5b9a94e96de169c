package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/bus"
)

// WithTx runs fn in one transaction and commits when fn returns nil. Any error
// or panic rolls back. fn sees only a transaction-bound *db.Queries, never the
// pool, so every statement it runs belongs to the transaction. fn's error is
// returned unchanged; callers translate database errors with AdaptError.
func WithTx(ctx context.Context, pool *pgxpool.Pool, fn func(q *db.Queries) error) error {
	_, err := WithTxV(ctx, pool, func(q *db.Queries) (struct{}, error) {
		return struct{}{}, fn(q)
	})
	return err
}

// WithTxV is WithTx for a closure that also returns a value, which WithTxV
// returns after a successful commit (and the zero value otherwise).
func WithTxV[T any](ctx context.Context, pool *pgxpool.Pool, fn func(q *db.Queries) (T, error)) (T, error) {
	return withTx(ctx, pool, pgx.TxOptions{}, fn)
}

// WithSnapshotV runs fn in one read-only transaction whose statements all
// read the same snapshot (REPEATABLE READ): reads that combine several
// tables which a concurrent writer changes together, such as the rollups
// and their watermarks, see them in step.
func WithSnapshotV[T any](ctx context.Context, pool *pgxpool.Pool, fn func(q *db.Queries) (T, error)) (T, error) {
	return withTx(ctx, pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, fn)
}

func withTx[T any](ctx context.Context, pool *pgxpool.Pool, opts pgx.TxOptions, fn func(q *db.Queries) (T, error)) (T, error) {
	var zero T
	tx, err := pool.BeginTx(ctx, opts)
	if err != nil {
		return zero, fmt.Errorf("begin transaction: %w", err)
	}
	// Roll back even when ctx is already cancelled, so the connection goes back
	// to the pool clean. After Commit this is a no-op returning ErrTxClosed.
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()

	v, err := fn(db.New(tx))
	if err != nil {
		return zero, err
	}
	if err := tx.Commit(ctx); err != nil {
		return zero, fmt.Errorf("commit transaction: %w", err)
	}
	return v, nil
}

// WithTxEndingCredentials is WithTxV for a transaction that may end
// credentials, directly or through a cascade: an SDK key revoked or gone
// with its environment or project; a token, session or membership deleted;
// a user deleted, deactivated or given another workspace role. Triggers
// record each one in the change log (migrations/00007_credential_log.sql);
// before committing, it reads the ones this transaction wrote and returns
// them, after a successful commit, as bus.OpRevoke events. The caller makes
// this instance forget them before it answers, and publishes them so that
// every instance ends their streams at once (docs/reference/identity.md,
// Roles); should the publish be lost, every instance still reads them from
// the change log within a poll.
func WithTxEndingCredentials[T any](ctx context.Context, pool *pgxpool.Pool, fn func(q *db.Queries) (T, error)) (T, []bus.Event, error) {
	var ended []bus.Event
	v, err := WithTxV(ctx, pool, func(q *db.Queries) (T, error) {
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
	if err != nil {
		return v, nil, err
	}
	return v, ended, nil
}
