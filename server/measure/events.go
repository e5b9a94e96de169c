package measure

import (
	"context"
	"encoding/json"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/limits"
)

// GoalEventInput is one reported goal event (docs/reference/measurement.md,
// Goal events).
type GoalEventInput struct {
	EventKey   string
	UserID     *string
	Value      *float64
	Context    json.RawMessage
	OccurredAt *time.Time // defaults to the receive time; later times are clamped to it
}

// IngestEvents stores a batch of goal events with one COPY; the event-key
// rollups fold the rows in later (rollups.go). Rows with an empty or
// over-long event_key are skipped; occurred_at defaults to the receive time,
// and a later time becomes the receive time, so a conversion never sorts
// before its exposure (docs/reference/measurement.md, Goal events).
func (s *Service) IngestEvents(ctx context.Context, p *auth.Principal, envID uuid.UUID, items []GoalEventInput) error {
	if len(items) > MaxBatchItems {
		return ErrBatchTooLarge
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	rows := make([]db.CopyGoalEventsParams, 0, len(items))
	for _, it := range items {
		if it.EventKey == "" || utf8.RuneCountInString(it.EventKey) > limits.MaxKeyLen {
			continue
		}
		at := now
		if it.OccurredAt != nil && it.OccurredAt.Before(now) {
			at = it.OccurredAt.UTC().Truncate(time.Microsecond)
		}
		rows = append(rows, db.CopyGoalEventsParams{
			EnvironmentID: envID, EventKey: it.EventKey, UserID: it.UserID, Value: it.Value,
			Context: it.Context, OccurredAt: at, ReceivedAt: now,
		})
	}
	return s.ingestBatch(ctx, p, envID, gateEvents, len(rows), func(q *db.Queries) error {
		_, err := q.CopyGoalEvents(ctx, rows)
		return err
	})
}

// ListEventKeys summarises the goal event keys of an environment, ordered
// by key.
func (s *Service) ListEventKeys(ctx context.Context, p *auth.Principal, envID uuid.UUID) ([]db.ListEventKeysRow, error) {
	return snapshotRead(ctx, s, p, envID, func(q *db.Queries, marks db.GetRollupWatermarksRow) ([]db.ListEventKeysRow, error) {
		return q.ListEventKeys(ctx, db.ListEventKeysParams{EnvironmentID: envID, EventsAfter: marks.Events})
	})
}
