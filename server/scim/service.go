package scim

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/audit"
	"github.com/switchyard/switchyard/server/bus"
	"github.com/switchyard/switchyard/server/groupsync"
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
	trail   *audit.Trail
}

// Config holds a Service's optional settings; its zero value works.
type Config struct {
	// Trail records every write in the workspace audit trail, in the
	// write's transaction; nil records with a development key.
	Trail  *audit.Trail
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
	s := &Service{pool: pool, logger: cfg.Logger, now: cfg.Now, forget: cfg.Invalidator, publish: cfg.Bus, trail: cfg.Trail}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// txV runs fn in one transaction that may end credentials
// (store.WithTxEndingCredentials), as identity's transactions do, and after
// the commit makes this instance forget the credentials it ended before the
// caller answers and publishes them so that every instance ends their
// streams at once.
func txV[T any](ctx context.Context, s *Service, fn func(q *db.Queries) (T, error)) (T, error) {
	v, ended, err := store.WithTxEndingCredentials(ctx, s.pool, fn)
	if err != nil || len(ended) == 0 {
		return v, err
	}
	if s.forget != nil {
		for _, e := range ended {
			s.forget.Invalidate(e)
		}
	}
	bus.PublishCommitted(ctx, s.publish, s.logger, ended...)
	return v, nil
}

// logChange logs one provisioning change at INFO (`scim change`), for
// operators; the audit trail's entry was written with the change.
func (s *Service) logChange(ctx context.Context, actor Actor, action, resource, id string) {
	s.logger.InfoContext(ctx, "scim change", "scim_token_id", actor.TokenID, "scim_token_prefix", actor.Prefix,
		"action", action, "resource", resource, "resource_id", id)
}

// as returns ctx naming the SCIM token as the actor of every audit entry
// recorded under it: the request's own changes and those the group rules
// make in consequence.
func (a Actor) as(ctx context.Context) context.Context {
	return audit.WithActor(ctx, audit.Actor{Kind: audit.ActorSCIM, ID: audit.Str(strconv.FormatInt(a.TokenID, 10)), Label: audit.Str(a.Prefix)})
}

// applyGroups applies single sign-on's admin groups and group mappings to
// users whose groups a change altered, in the change's transaction, so
// that roles follow group membership at once (docs/scim.md, Groups and
// roles); groupsync records what they change. The caller holds the
// workspace lock. With single sign-on off it changes nothing.
func (s *Service) applyGroups(ctx context.Context, q *db.Queries, users []int64) error {
	res, err := groupsync.Apply(ctx, q, s.trail, users...)
	if err != nil {
		return fmt.Errorf("apply group mappings: %w", err)
	}
	for _, id := range res.KeptAdmins {
		s.logger.WarnContext(ctx, "scim kept the last workspace admin", "user_id", id)
	}
	return nil
}
