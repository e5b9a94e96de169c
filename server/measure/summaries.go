package measure

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/auth"
)

// SummaryInput is a count of evaluations of one flag that returned one value
// between Start and End, which an SDK did not report one by one
// (docs/reference/measurement.md, Summaries). The HTTP layer skips rows that
// break the contract's rules before they get here.
type SummaryInput struct {
	FlagKey    string
	Value      string // rendered as an impression's value is
	Count      int64  // at least 1
	Start, End time.Time
}

// IngestSummaries stores a batch of summaries with one COPY; the folder adds
// them to the rollups, where they count wherever evaluations are counted
// (stats, exposure, the timeline, flag status) at their End, and nowhere
// users are. Who may report impressions may report summaries.
func (s *Service) IngestSummaries(ctx context.Context, p *auth.Principal, envID uuid.UUID, items []SummaryInput) error {
	if len(items) > MaxBatchItems {
		return ErrBatchTooLarge
	}
	rows := make([]db.CopySummariesParams, len(items))
	for i, it := range items {
		rows[i] = db.CopySummariesParams{
			EnvironmentID: envID, FlagKey: it.FlagKey, Value: it.Value, Count: it.Count,
			StartAt: it.Start, EndAt: it.End,
		}
	}
	return s.ingestBatch(ctx, p, envID, gateSummaries, len(rows), func(q *db.Queries) error {
		_, err := q.CopySummaries(ctx, rows)
		return err
	})
}
