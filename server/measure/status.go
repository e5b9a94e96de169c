package measure

import (
	"context"
	"sort"
	"time"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/auth"
)

// The four flag statuses (docs/reference/measurement.md, Flag status).
const (
	StatusNew      = "new"
	StatusActive   = "active"
	StatusLaunched = "launched"
	StatusInactive = "inactive"
)

// statusWindow is "the last 7 days": the rolling 168 hours before the
// request.
const statusWindow = 168 * time.Hour

// FlagStatus is one flag's status.
type FlagStatus struct {
	FlagKey         string
	Status          string
	LastEvaluatedAt *time.Time
	Evaluations7d   int64
	Values7d        []ValueCount // ordered by value
}

// ValueCount is how many evaluations returned one value.
type ValueCount struct {
	Value string
	Count int64
}

// FlagStatuses returns the status of every flag of the environment, archived
// ones included, ordered by key. Evaluations are impressions plus summaries
// of the flag's key, whatever their date relative to the flag's creation; a
// summary counts at its end. The window's full hours come from the hourly
// rollup and its partial first hour from the raw rows, so the count is
// exact to the instant; rows not yet folded come from the tail (read.go).
func (s *Service) FlagStatuses(ctx context.Context, p *auth.Principal, envID uuid.UUID) ([]FlagStatus, error) {
	now := s.now()
	since := now.Add(-statusWindow)
	firstFull := since.Truncate(time.Hour) // time.Truncate works on absolute time: hours of UTC
	if !firstFull.Equal(since) {
		firstFull = firstFull.Add(time.Hour)
	}
	return snapshotRead(ctx, s, p, envID, func(q *db.Queries, marks db.GetRollupWatermarksRow) ([]FlagStatus, error) {
		flags, err := q.ListFlagStatusFlags(ctx, envID)
		if err != nil {
			return nil, err
		}
		last, err := q.ListLastEvaluations(ctx, envID)
		if err != nil {
			return nil, err
		}
		counts := map[string]map[string]int64{} // flag key -> value -> evaluations in the window
		add := func(flag, value string, n int64) {
			if counts[flag] == nil {
				counts[flag] = map[string]int64{}
			}
			counts[flag][value] += n
		}
		hours, err := q.ListEvaluationHours(ctx, db.ListEvaluationHoursParams{EnvironmentID: envID, FromHour: firstFull})
		if err != nil {
			return nil, err
		}
		for _, h := range hours {
			add(h.FlagKey, h.Value, h.Evaluations)
		}
		if firstFull.After(since) {
			raw := db.CountRawImpressionsParams{EnvironmentID: envID, Since: since, Until: firstFull}
			imps, err := q.CountRawImpressions(ctx, raw)
			if err != nil {
				return nil, err
			}
			for _, r := range imps {
				add(r.FlagKey, r.Value, r.Evaluations)
			}
			sums, err := q.CountRawSummaries(ctx, db.CountRawSummariesParams(raw))
			if err != nil {
				return nil, err
			}
			for _, r := range sums {
				add(r.FlagKey, r.Value, r.Evaluations)
			}
		}
		lastAt := make(map[string]time.Time, len(last))
		for _, l := range last {
			lastAt[l.FlagKey] = l.LastEvaluatedAt
		}
		// The tail the rollups do not hold yet (read.go); its rows in the
		// partial first hour were counted with the raw rows above.
		tail, err := q.ListTailEvaluations(ctx, db.ListTailEvaluationsParams{
			EnvironmentID: envID, ImpressionsAfter: marks.Impressions, SummariesAfter: marks.Summaries, FromTime: firstFull,
		})
		if err != nil {
			return nil, err
		}
		for _, r := range tail {
			if r.Evaluations > 0 {
				add(r.FlagKey, r.Value, r.Evaluations)
			}
			if at, ok := lastAt[r.FlagKey]; !ok || r.LastAt.After(at) {
				lastAt[r.FlagKey] = r.LastAt
			}
		}
		out := make([]FlagStatus, len(flags))
		for i, f := range flags {
			st := FlagStatus{FlagKey: f.Key, Values7d: []ValueCount{}}
			if at, ok := lastAt[f.Key]; ok {
				st.LastEvaluatedAt = &at
			}
			for v, n := range counts[f.Key] {
				st.Values7d = append(st.Values7d, ValueCount{Value: v, Count: n})
				st.Evaluations7d += n
			}
			sort.Slice(st.Values7d, func(a, b int) bool { return st.Values7d[a].Value < st.Values7d[b].Value })
			st.Status = statusOf(st, f.CreatedAt, f.UpdatedAt, since)
			out[i] = st
		}
		return out, nil
	})
}

// statusOf applies the contract's definitions to one flag whose window
// started at since.
func statusOf(st FlagStatus, created, changed, since time.Time) string {
	switch {
	case st.Evaluations7d == 0 && created.After(since) && st.LastEvaluatedAt == nil:
		return StatusNew
	case st.Evaluations7d == 0:
		return StatusInactive
	case len(st.Values7d) == 1 && !changed.After(since):
		return StatusLaunched
	}
	return StatusActive
}
