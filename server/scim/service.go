package scim

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/bus"
	"github.com/switchyard/switchyard/server/store"
)

// Invalidator forgets ended credentials on this instance before a request
// that ended them is answered; identity's Service is one.
type Invalidator interface {
	Invalidate(e bus.Event)
}

// Service runs the SCIM operations against the database.
type Service struct {
	pool    *pgxpool.Pool
	logger  *slog.Logger
	now     func() time.Time
	forget  Invalidator
	publish bus.Publisher
}

// Config holds a Service's optional settings; its zero value works.
type Config struct {
	Logger *slog.Logger     // discarded when nil
	Now    func() time.Time // the clock (token use); time.Now when nil
	// Invalidator forgets credentials a SCIM change ended on this instance
	// (identity's Service); none when nil.
	Invalidator Invalidator
	// Bus announces ended credentials to every instance, so their streams
	// end at once; none when nil.
	Bus bus.Publisher
}

// New returns a Service on pool.
func New(pool *pgxpool.Pool, cfg Config) *Service {
	s := &Service{pool: pool, logger: cfg.Logger, now: cfg.Now, forget: cfg.Invalidator, publish: cfg.Bus}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// txV runs fn in one transaction and then ends every credential it ended,
// exactly as identity's transactions do: triggers record each ended session,
// membership and deactivated user in the change log; before committing, txV
// reads the ones this transaction wrote, and after the commit it makes this
// instance forget them before the caller answers and publishes them so that
// every instance forgets them and ends their streams at once. Should the
// publish be lost, every instance still reads them from the change log within
// a poll.
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
	if s.forget != nil {
		for _, e := range ended {
			s.forget.Invalidate(e)
		}
	}
	// A failed publish is logged, never returned: the change is durable, and
	// instances that miss messages catch up from the change log.
	if s.publish != nil {
		if err := s.publish.Publish(context.WithoutCancel(ctx), ended...); err != nil {
			s.logger.WarnContext(ctx, "publish change", "err", err.Error(), "events", len(ended))
		}
	}
	return v, nil
}

// audit records one provisioning change. The audit log holds entries of an
// environment only, so workspace-level changes go to the log at INFO.
func (s *Service) audit(ctx context.Context, actor Actor, action, resource, id string) {
	s.logger.InfoContext(ctx, "scim change", "scim_token_id", actor.TokenID, "scim_token_prefix", actor.Prefix,
		"action", action, "resource", resource, "resource_id", id)
}
