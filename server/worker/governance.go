package worker

import (
	"context"
	"log/slog"
	"time"
)

// ScheduledChanges is what the scheduled-change runner needs of core.
type ScheduledChanges interface {
	RunScheduledChange(ctx context.Context) (bool, error)
}

// Notifications is what the delivery loop needs of notify.
type Notifications interface {
	DeliverNotifications(ctx context.Context) (int, error)
}

// Releases is what the release guard needs of release.
type Releases interface {
	RunReleaseCheck(ctx context.Context) (bool, error)
}

// NewReleaseGuard returns the loop that runs due release checks, one per
// step, each exactly once across instances.
func NewReleaseGuard(r Releases, interval time.Duration, logger *slog.Logger) *Loop {
	return New("release_checks", r.RunReleaseCheck, LoopConfig{Interval: interval, Logger: logger})
}

// NewScheduler returns the loop that applies due scheduled changes, one per
// step, each exactly once across instances.
func NewScheduler(c ScheduledChanges, interval time.Duration, logger *slog.Logger) *Loop {
	return New("scheduled_changes", c.RunScheduledChange, LoopConfig{Interval: interval, Logger: logger})
}

// NewDelivery returns the loop that delivers notifications from the outbox.
func NewDelivery(n Notifications, interval time.Duration, logger *slog.Logger) *Loop {
	return New("notifications", func(ctx context.Context) (bool, error) {
		claimed, err := n.DeliverNotifications(ctx)
		return claimed > 0, err
	}, LoopConfig{Interval: interval, Logger: logger})
}
