package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/switchyard/switchyard/db"
)

// notificationLease is how long a claimed notification stays reserved for
// its sender without a renewal. The sender renews it every third of a lease
// while it still holds the row (claim.keep), so a live sender keeps its rows
// however long its receivers take: one request is bounded by the notify
// client's timeout (notify.DefaultTimeout, 5 s), but a batch sends each
// target's rows one after another. A crashed sender renews nothing, and its
// rows are claimed again at most a lease plus one idle poll of the delivery
// loop (1 s) after its last renewal: well within the 30 s target for
// retrying a delivery cut short by a crash (docs/governance.md).
const notificationLease = 10 * time.Second

// notificationBatch is how many notifications one DeliverNotifications call
// claims and sends concurrently.
const notificationBatch = 16

// DeliverNotifications claims due notifications from the outbox, makes one
// delivery attempt for each, logs it, and then removes the notification or
// schedules its retry. It returns how many it claimed. Several instances
// may call it at once: each notification is claimed by one of them, and
// the claim is renewed until its attempt is over, so no other instance
// sends it while it is in flight.
func (s *Service) DeliverNotifications(ctx context.Context) (int, error) {
	c := &claim{id: uuid.New(), lease: s.lease, at: time.Now()} // before the claim: the lease starts later
	rows, err := db.New(s.pool).ClaimNotifications(ctx, db.ClaimNotificationsParams{
		ClaimID: c.id, LeaseSeconds: s.lease.Seconds(), MaxRows: notificationBatch,
	})
	if err != nil {
		return 0, fmt.Errorf("claim notifications: %w", err)
	}
	if len(rows) == 0 {
		return 0, nil
	}
	sends := c.hold(ctx, rows)
	stop, kept := make(chan struct{}), make(chan struct{})
	go func() { defer close(kept); c.keep(ctx, s.pool, s.logger, stop) }()
	defer func() { close(stop); <-kept }()

	// Targets are served concurrently; each target's notifications are sent
	// one after another in the order they were written, so a receiver sees
	// the events of one batch in order (order across retries is not kept).
	slices.SortStableFunc(rows, func(a, b db.NotificationOutbox) int { return a.OccurredAt.Compare(b.OccurredAt) })
	var order []uuid.UUID
	byTarget := map[uuid.UUID][]db.NotificationOutbox{}
	for _, row := range rows {
		target := row.ID
		switch {
		case row.WebhookID != nil:
			target = *row.WebhookID
		case row.IntegrationID != nil:
			target = *row.IntegrationID
		}
		if _, seen := byTarget[target]; !seen {
			order = append(order, target)
		}
		byTarget[target] = append(byTarget[target], row)
	}
	var wg sync.WaitGroup
	for _, target := range order {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, row := range byTarget[target] {
				err := s.deliver(sends[row.ID], c.id, row)
				c.finish(row.ID)
				if errors.Is(err, errCutShort) {
					// No attempt was made or completed: give the row back
					// so any instance sends it now, not after the lease.
					rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), notifyFinishTimeout)
					if rerr := db.New(s.pool).ReleaseNotificationClaim(rctx, db.ReleaseNotificationClaimParams{ID: row.ID, ClaimID: c.id}); rerr != nil {
						err = errors.Join(err, fmt.Errorf("release notification: %w", rerr)) // its lease lapses instead
					}
					cancel()
				}
				if err != nil && ctx.Err() == nil {
					s.logger.WarnContext(ctx, "deliver notification", "err", err.Error(), "delivery_id", row.ID.String(), "event", row.Event)
				}
			}
		}()
	}
	wg.Wait()
	return len(rows), nil
}

// notifyFinishTimeout bounds the database writes that end an attempt. They
// run even when the send's context has ended (shutdown): an attempt that
// was made must be recorded, or it would be made again.
const notifyFinishTimeout = 5 * time.Second

// errCutShort marks a delivery that ended, through its context, before its
// attempt was made or completed: nothing was logged, and the claim may be
// given back.
var errCutShort = errors.New("delivery cut short")

// cutShort marks err with errCutShort when ctx has ended.
func cutShort(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w: %w", errCutShort, err)
	}
	return err
}

// claim is the rows one DeliverNotifications call claimed, under one id.
// Each row's send runs under its own context, cancelled when the row is
// finished or when the claim turns out not to hold it any more.
type claim struct {
	id    uuid.UUID
	lease time.Duration
	at    time.Time // no later than the lease's start

	mu   sync.Mutex
	held map[uuid.UUID]context.CancelFunc // the rows not finished yet
}

// hold starts holding rows and returns the context of each row's send.
func (c *claim) hold(ctx context.Context, rows []db.NotificationOutbox) map[uuid.UUID]context.Context {
	sends := make(map[uuid.UUID]context.Context, len(rows))
	c.held = make(map[uuid.UUID]context.CancelFunc, len(rows))
	for _, row := range rows {
		sends[row.ID], c.held[row.ID] = context.WithCancel(ctx)
	}
	return sends
}

// finish stops holding a row.
func (c *claim) finish(id uuid.UUID) {
	c.mu.Lock()
	cancel := c.held[id]
	delete(c.held, id)
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// holding returns the rows not finished yet.
func (c *claim) holding() []uuid.UUID {
	c.mu.Lock()
	defer c.mu.Unlock()
	ids := make([]uuid.UUID, 0, len(c.held))
	for id := range c.held {
		ids = append(ids, id)
	}
	return ids
}

// keepOnly stops holding, and cancels the sends of, every row not in kept
// (all of them when kept is nil), and returns how many it dropped.
func (c *claim) keepOnly(kept []uuid.UUID) int {
	var drop []context.CancelFunc
	c.mu.Lock()
	for id, cancel := range c.held {
		if !slices.Contains(kept, id) {
			drop = append(drop, cancel)
			delete(c.held, id)
		}
	}
	c.mu.Unlock()
	for _, cancel := range drop {
		cancel()
	}
	return len(drop)
}

// keep renews the claim's lease every third of a lease until stop is
// closed. A row the renewal no longer finds (deleted with its webhook, or
// claimed again elsewhere after this claim lapsed) has its send cancelled.
// When the lease cannot be renewed before it runs out (the database is
// unreachable), every send still held is cancelled: another instance may
// claim the rows once the lease lapses, and this one must not send them
// too. (A request already on the wire cannot be taken back; that is the
// one case of a double send, and it needs the database gone for a lease.)
func (c *claim) keep(ctx context.Context, pool db.DBTX, logger *slog.Logger, stop <-chan struct{}) {
	every := c.lease / 3
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	renewed := c.at
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return // the sends end with ctx
		case <-ticker.C:
		}
		start := time.Now()
		rctx, cancel := context.WithTimeout(ctx, every) // a slow renewal still counts; a hung one is a failure
		kept, err := db.New(pool).ExtendNotificationClaim(rctx, db.ExtendNotificationClaimParams{
			ClaimID: c.id, Ids: c.holding(), LeaseSeconds: c.lease.Seconds(),
		})
		cancel()
		switch {
		case err != nil && ctx.Err() != nil:
			return
		case err != nil && time.Since(renewed)+every >= c.lease: // the next renewal would come too late
			n := c.keepOnly(nil)
			logger.WarnContext(ctx, "notification claim not renewed: its sends are abandoned", "err", err.Error(), "notifications", n)
			return
		case err != nil:
			logger.WarnContext(ctx, "renew notification claim", "err", err.Error())
		default:
			renewed = start
			if n := c.keepOnly(kept); n > 0 {
				logger.DebugContext(ctx, "notifications no longer held by their claim", "notifications", n)
			}
		}
	}
}

// deliver makes one attempt of a notification claimed under claimID. A failed
// delivery is retried after 1 s, 5 s and 15 s (s.backoff), every attempt is
// logged, and a chat provider's 4xx is a rejection, not retried
// (docs/reference/notifications.md, Retries). An error marked errCutShort means
// no attempt was completed.
func (s *Service) deliver(ctx context.Context, claimID uuid.UUID, row db.NotificationOutbox) error {
	q := db.New(s.pool)
	// Once an attempt is made, recording its outcome must not be cut short.
	finish := func(f func(context.Context) error) error {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), notifyFinishTimeout)
		defer cancel()
		return f(fctx)
	}
	drop := func() error {
		return finish(func(fctx context.Context) error { return q.DeleteNotification(fctx, row.ID) })
	}
	env, err := envelopeOf(ctx, q, row)
	if errors.Is(err, pgx.ErrNoRows) {
		return drop() // the environment is gone
	}
	if err != nil {
		return cutShort(ctx, err)
	}
	var res Result
	switch {
	case row.WebhookID != nil:
		hook, err := q.GetWebhookByID(ctx, *row.WebhookID)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && !hook.Enabled) {
			return drop() // disabled webhooks receive nothing
		}
		if err != nil {
			return cutShort(ctx, err)
		}
		if _, res, err = s.sendWebhook(ctx, q, hook, env); err != nil {
			return cutShort(ctx, err)
		}
	case row.IntegrationID != nil:
		ig, err := q.GetChatIntegrationByID(ctx, *row.IntegrationID)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && !ig.Enabled) {
			return drop()
		}
		if err != nil {
			return cutShort(ctx, err)
		}
		if _, res, err = s.sendChat(ctx, q, ig, env); err != nil {
			return cutShort(ctx, err)
		}
		if res.Rejected() {
			return drop()
		}
	default:
		return drop()
	}
	if res.OK() || int(row.Attempts) > len(s.backoff) {
		return drop()
	}
	return finish(func(fctx context.Context) error {
		return q.RetryNotificationAfter(fctx, db.RetryNotificationAfterParams{
			ID: row.ID, ClaimID: claimID, DelaySeconds: s.backoff[row.Attempts-1].Seconds(),
		})
	})
}

// envelopeOf builds the payload of an outbox row.
func envelopeOf(ctx context.Context, q *db.Queries, row db.NotificationOutbox) (Envelope, error) {
	where, err := q.GetNotificationContext(ctx, row.EnvironmentID)
	if err != nil {
		return Envelope{}, err
	}
	e := Envelope{
		Event: row.Event, DeliveryID: row.ID, OccurredAt: row.OccurredAt.UTC(),
		Environment: Ref{ID: where.EnvironmentID, Name: where.EnvironmentName},
		Project:     Ref{ID: where.ProjectID, Name: where.ProjectName},
		Actor:       row.Actor, FlagKey: row.FlagKey, Data: row.Data,
	}
	if len(row.Flag) > 0 {
		var st FlagState
		if err := json.Unmarshal(row.Flag, &st); err == nil {
			e.Flag = &st
		}
	}
	return e, nil
}

// sendWebhook makes one attempt and logs it.
func (s *Service) sendWebhook(ctx context.Context, q *db.Queries, hook db.Webhook, e Envelope) (db.WebhookDelivery, Result, error) {
	secret := ""
	if hook.Secret != nil {
		secret = *hook.Secret
	}
	res := s.notifier.SendWebhook(ctx, hook.URL, secret, e)
	if err := ctx.Err(); err != nil {
		return db.WebhookDelivery{}, res, err // shutting down, or the claim was lost: not an attempt
	}
	d, err := q.InsertWebhookDelivery(context.WithoutCancel(ctx), db.InsertWebhookDeliveryParams{
		WebhookID: hook.ID, Event: e.Event, StatusCode: int32Ptr(res.StatusCode), ResponseBody: res.ResponseBody, Error: res.Error,
	})
	if err != nil {
		return db.WebhookDelivery{}, res, fmt.Errorf("log webhook delivery: %w", err)
	}
	if err := q.PruneWebhookDeliveries(context.WithoutCancel(ctx), hook.ID); err != nil {
		return d, res, fmt.Errorf("prune webhook deliveries: %w", err)
	}
	return d, res, nil
}

// sendChat makes one attempt and logs it; the test route uses it too, so a
// test message takes the real delivery path.
func (s *Service) sendChat(ctx context.Context, q *db.Queries, ig db.ChatIntegration, e Envelope) (db.ChatDelivery, Result, error) {
	res := s.notifier.SendChat(ctx, ig.Kind, ig.WebhookURL, e)
	if err := ctx.Err(); err != nil {
		return db.ChatDelivery{}, res, err // shutting down, or the claim was lost: not an attempt
	}
	d, err := q.InsertChatDelivery(context.WithoutCancel(ctx), db.InsertChatDeliveryParams{
		IntegrationID: ig.ID, Event: e.Event, StatusCode: int32Ptr(res.StatusCode), ResponseBody: res.ResponseBody, Error: res.Error,
	})
	if err != nil {
		return db.ChatDelivery{}, res, fmt.Errorf("log chat delivery: %w", err)
	}
	if err := q.PruneChatDeliveries(context.WithoutCancel(ctx), ig.ID); err != nil {
		return d, res, fmt.Errorf("prune chat deliveries: %w", err)
	}
	return d, res, nil
}

func int32Ptr(v *int) *int32 {
	if v == nil {
		return nil
	}
	n := int32(*v)
	return &n
}
