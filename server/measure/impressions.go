package measure

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/limits"
)

// MaxBatchItems is the largest impression or goal-event batch; larger
// batches answer 413 (docs/reference/limits.md, Requests).
const MaxBatchItems = 500

// Impression list limits: clamped, never rejected
// (docs/reference/measurement.md, Impressions).
const (
	defaultImpressionLimit = 50
	maxImpressionLimit     = 200
)

// Exposure timeline length in days (docs/reference/measurement.md, Exposure).
const (
	defaultExposureDays = 14
	maxExposureDays     = 90
)

// ErrBatchTooLarge refuses a batch of more than MaxBatchItems items (413).
var ErrBatchTooLarge = apperr.Ef(apperr.TooLarge, "a batch holds at most %d items", MaxBatchItems)

// ImpressionInput is one reported evaluation.
type ImpressionInput struct {
	FlagKey     string
	UserID      *string // nil for anonymous evaluations
	Value       string  // the result rendered as a string (docs/reference/evaluation.md, Rendered values)
	Context     json.RawMessage
	EvaluatedAt *time.Time // defaults to the receive time
}

// IngestImpressions stores a batch of impressions with one COPY; the
// rollups fold the rows in later (rollups.go), so ingest runs near raw COPY
// speed. SDK keys of the environment and any member who may read it may
// report; no admin role is needed (docs/reference/measurement.md, Who may
// report).
func (s *Service) IngestImpressions(ctx context.Context, p *auth.Principal, envID uuid.UUID, items []ImpressionInput) error {
	if len(items) > MaxBatchItems {
		return ErrBatchTooLarge
	}
	now := s.now()
	rows := make([]db.CopyImpressionsParams, len(items))
	for i, it := range items {
		at := now
		if it.EvaluatedAt != nil {
			at = *it.EvaluatedAt
		}
		rows[i] = db.CopyImpressionsParams{
			EnvironmentID: envID, FlagKey: it.FlagKey, UserID: it.UserID,
			Value: it.Value, Context: it.Context, EvaluatedAt: at,
		}
	}
	return s.ingestBatch(ctx, p, envID, gateImpressions, len(rows), func(q *db.Queries) error {
		_, err := q.CopyImpressions(ctx, rows)
		return err
	})
}

// ImpressionFilter selects impressions to list. Nil fields are not applied.
type ImpressionFilter struct {
	FlagKey, UserID, Value *string
	SinceID                *int64 // rows with a greater id; Offset is then ignored
	Limit                  *int32 // clamped to 1..200, default 50
	Offset                 *int32 // negative counts as 0
}

// ImpressionPage is one page of impressions, newest first, and the number of
// rows matching the filter's exact filters (ignoring SinceID).
type ImpressionPage struct {
	Items []db.Impression
	Total int64
}

// ListImpressions lists an environment's impressions newest first (by id).
func (s *Service) ListImpressions(ctx context.Context, p *auth.Principal, envID uuid.UUID, f ImpressionFilter) (ImpressionPage, error) {
	params := db.ListImpressionsParams{
		EnvironmentID: envID, FlagKey: f.FlagKey, UserID: f.UserID, Value: f.Value,
		RowLimit: clamp(f.Limit, defaultImpressionLimit, 1, maxImpressionLimit),
	}
	if f.Offset != nil && *f.Offset > 0 {
		params.RowOffset = *f.Offset
	}
	if f.SinceID != nil {
		params.SinceID = *f.SinceID
		params.RowOffset = 0 // offset is ignored when since_id is set
	}
	return snapshotRead(ctx, s, p, envID, func(q *db.Queries, marks db.GetRollupWatermarksRow) (ImpressionPage, error) {
		items, err := q.ListImpressions(ctx, params)
		if err != nil {
			return ImpressionPage{}, err
		}
		var total int64
		if f.UserID != nil {
			total, err = q.CountImpressionsByUser(ctx, db.CountImpressionsByUserParams{
				EnvironmentID: envID, FlagKey: f.FlagKey, UserID: f.UserID, Value: f.Value,
			})
		} else {
			// Without a user filter the daily rollup counts the folded rows
			// without scanning them (read.go).
			total, err = q.CountImpressionsFromDaily(ctx, db.CountImpressionsFromDailyParams{
				EnvironmentID: envID, FlagKey: f.FlagKey, Value: f.Value, ImpressionsAfter: marks.Impressions,
			})
		}
		return ImpressionPage{Items: items, Total: total}, err
	})
}

// ImpressionStats returns one entry per flag key with impressions,
// ordered by flag key.
func (s *Service) ImpressionStats(ctx context.Context, p *auth.Principal, envID uuid.UUID) ([]db.ListImpressionStatsRow, error) {
	return snapshotRead(ctx, s, p, envID, func(q *db.Queries, marks db.GetRollupWatermarksRow) ([]db.ListImpressionStatsRow, error) {
		return q.ListImpressionStats(ctx, db.ListImpressionStatsParams{
			EnvironmentID: envID, ImpressionsAfter: marks.Impressions, SummariesAfter: marks.Summaries,
		})
	})
}

// Exposure is the exposure breakdown of one flag
// (docs/reference/measurement.md, Exposure).
type Exposure struct {
	FlagKey          string
	TotalImpressions int64
	TotalUsers       int64
	Variants         []db.ListExposureVariantsRow // ordered by value
	Timeline         []ExposureDay                // ordered by day, then value
}

// ExposureDay is the number of impressions of one value on one UTC day.
type ExposureDay struct {
	Day   time.Time // midnight UTC
	Value string
	Count int64
}

// Exposure breaks one flag's impressions down by value, with a daily
// timeline of the last days UTC days, today included (clamped to 1..90,
// default 14). Days without impressions are absent from the timeline.
func (s *Service) Exposure(ctx context.Context, p *auth.Principal, envID uuid.UUID, flagKey *string, days *int32) (Exposure, error) {
	switch {
	case flagKey == nil || *flagKey == "":
		return Exposure{}, apperr.Field("flag_key", "is required")
	case len(*flagKey) > limits.MaxKeyLen:
		return Exposure{}, apperr.Field("flag_key", "must be at most 100 characters")
	}
	n := clamp(days, defaultExposureDays, 1, maxExposureDays)
	today := s.now().UTC().Truncate(24 * time.Hour)
	first := today.AddDate(0, 0, -int(n-1))
	return snapshotRead(ctx, s, p, envID, func(q *db.Queries, marks db.GetRollupWatermarksRow) (Exposure, error) {
		out := Exposure{FlagKey: *flagKey, Timeline: []ExposureDay{}}
		var err error
		if out.Variants, err = q.ListExposureVariants(ctx, db.ListExposureVariantsParams{
			EnvironmentID: envID, FlagKey: *flagKey, ImpressionsAfter: marks.Impressions, SummariesAfter: marks.Summaries,
		}); err != nil {
			return Exposure{}, err
		}
		for _, v := range out.Variants {
			out.TotalImpressions += v.Impressions
		}
		if out.TotalUsers, err = q.GetFlagUsers(ctx, db.GetFlagUsersParams{EnvironmentID: envID, FlagKey: *flagKey, ImpressionsAfter: marks.Impressions}); err != nil {
			return Exposure{}, err
		}
		timeline, err := q.ListExposureTimeline(ctx, db.ListExposureTimelineParams{
			EnvironmentID: envID, FlagKey: *flagKey, FirstDay: pgtype.Date{Time: first, Valid: true},
			ImpressionsAfter: marks.Impressions, SummariesAfter: marks.Summaries,
		})
		if err != nil {
			return Exposure{}, err
		}
		for _, d := range timeline {
			out.Timeline = append(out.Timeline, ExposureDay{Day: d.Day.Time, Value: d.Value, Count: d.Impressions})
		}
		return out, nil
	})
}
