package release

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/db"
)

// Statuses of a release (docs/releases.md, Statuses).
const (
	StatusRunning    = "running"
	StatusPaused     = "paused"
	StatusCompleted  = "completed"
	StatusRolledBack = "rolled_back"
	StatusCancelled  = "cancelled"
)

// Metric kinds and bad directions.
const (
	KindConversion  = "conversion"
	KindMean        = "mean"
	BadIncrease     = "increase"
	BadDecrease     = "decrease"
	defaultAlpha    = 0.05
	defaultMinUsers = 100
	defaultInterval = 60
)

// Stage is one step of the ramp: the flag's rollout percentage, held for
// DurationSeconds.
type Stage struct {
	Percentage      int   `json:"percentage"`
	DurationSeconds int64 `json:"duration_seconds"`
}

// Metric is one guardrail: a goal event key, how a user's value is made of
// their events (conversion or mean), which direction is bad, and how much
// worse (a relative lift) is tolerated.
type Metric struct {
	EventKey     string  `json:"event_key"`
	Kind         string  `json:"kind"`
	BadDirection string  `json:"bad_direction"`
	Tolerance    float64 `json:"tolerance"`
}

// Release is a guarded release as the API shows it.
type Release struct {
	ID                        uuid.UUID  `json:"id"`
	EnvironmentID             uuid.UUID  `json:"environment_id"`
	FlagKey                   string     `json:"flag_key"`
	Status                    string     `json:"status"`
	Stages                    []Stage    `json:"stages"`
	StageIndex                int        `json:"stage_index"`
	StageStartedAt            time.Time  `json:"stage_started_at"`
	Metrics                   []Metric   `json:"metrics"`
	Alpha                     float64    `json:"alpha"`
	MinUsers                  int64      `json:"min_users"`
	CheckIntervalSeconds      int        `json:"check_interval_seconds"`
	PreviousRolloutPercentage *int       `json:"previous_rollout_percentage"`
	Reason                    *string    `json:"reason"`
	CreatedBy                 *int64     `json:"created_by"`
	StartedAt                 time.Time  `json:"started_at"`
	EndedAt                   *time.Time `json:"ended_at"`
	Analysis                  *Analysis  `json:"analysis"`
	CreatedAt                 time.Time  `json:"created_at"`
	UpdatedAt                 time.Time  `json:"updated_at"`
}

// ArmSummary is one arm of one metric in a check: its users, and the mean
// and variance of their per-user values.
type ArmSummary struct {
	Users    int64   `json:"users"`
	Mean     float64 `json:"mean"`
	Variance float64 `json:"variance"`
}

// MetricAnalysis is one metric in a check. Numbers that are not defined
// are null.
type MetricAnalysis struct {
	EventKey     string     `json:"event_key"`
	Kind         string     `json:"kind"`
	BadDirection string     `json:"bad_direction"`
	Tolerance    float64    `json:"tolerance"`
	Treatment    ArmSummary `json:"treatment"`
	Control      ArmSummary `json:"control"`
	Lift         *float64   `json:"lift"`
	CILower      *float64   `json:"ci_lower"`
	CIUpper      *float64   `json:"ci_upper"`
	PValue       *float64   `json:"p_value"`
	Regressed    bool       `json:"regressed"`
}

// SampleRatio is a check's sample-ratio test over the users first exposed
// in the current stage.
type SampleRatio struct {
	Users          int64   `json:"users"`
	TreatmentUsers int64   `json:"treatment_users"`
	ExpectedShare  float64 `json:"expected_share"`
	PValue         float64 `json:"p_value"`
	Mismatch       bool    `json:"mismatch"`
}

// Analysis is one check.
type Analysis struct {
	CheckedAt      time.Time        `json:"checked_at"`
	StageIndex     int              `json:"stage_index"`
	Percentage     int              `json:"percentage"`
	TreatmentUsers int64            `json:"treatment_users"`
	ControlUsers   int64            `json:"control_users"`
	Metrics        []MetricAnalysis `json:"metrics"`
	SRM            *SampleRatio     `json:"srm"`
}

// Input is what starting a release takes; nil fields take their defaults.
type Input struct {
	Stages               []Stage
	Metrics              []Metric
	Alpha                *float64
	MinUsers             *int64
	CheckIntervalSeconds *int
}

// fromRow is a stored release as the API shows it.
func fromRow(r db.Release) (Release, error) {
	out := Release{
		ID: r.ID, EnvironmentID: r.EnvironmentID, FlagKey: r.FlagKey, Status: r.Status,
		StageIndex: int(r.StageIndex), StageStartedAt: r.StageStartedAt.UTC(), Alpha: r.Alpha,
		MinUsers: int64(r.MinUsers), CheckIntervalSeconds: int(r.CheckIntervalSeconds),
		Reason: r.Reason, CreatedBy: r.CreatedBy, StartedAt: r.StartedAt.UTC(),
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
	}
	if r.PreviousRolloutPercentage != nil {
		p := int(*r.PreviousRolloutPercentage)
		out.PreviousRolloutPercentage = &p
	}
	if r.EndedAt != nil {
		t := r.EndedAt.UTC()
		out.EndedAt = &t
	}
	if err := json.Unmarshal(r.Stages, &out.Stages); err != nil {
		return Release{}, fmt.Errorf("decode release stages: %w", err)
	}
	if err := json.Unmarshal(r.Metrics, &out.Metrics); err != nil {
		return Release{}, fmt.Errorf("decode release metrics: %w", err)
	}
	if len(r.Analysis) > 0 && string(r.Analysis) != "null" {
		out.Analysis = new(Analysis)
		if err := json.Unmarshal(r.Analysis, out.Analysis); err != nil {
			return Release{}, fmt.Errorf("decode release analysis: %w", err)
		}
	}
	return out, nil
}
