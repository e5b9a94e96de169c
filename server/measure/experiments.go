package measure

import (
	"context"
	"errors"
	"sort"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/access"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/limits"
	"github.com/switchyard/switchyard/server/stats"
	"github.com/switchyard/switchyard/server/store"
)

var errExperimentNotFound = apperr.E(apperr.NotFound, "experiment not found")

// Experiment statuses: any status may move to any other
// (docs/reference/measurement.md, Experiments).
const (
	ExperimentRunning   = "running"
	ExperimentPaused    = "paused"
	ExperimentCompleted = "completed"
)

const keyRule = "must be 1 to 100 ASCII letters, digits, underscores or hyphens"

// ExperimentInput creates an experiment.
type ExperimentInput struct {
	Key, Name, FlagKey, GoalEventKey string
	Description, ControlVariant      *string
}

// ExperimentPatch changes an experiment; nil fields are left alone, and the
// Clear flags set a nullable field to null.
type ExperimentPatch struct {
	Status, Name, GoalEventKey  *string
	Description, ControlVariant *string

	ClearDescription, ClearControlVariant bool
}

// ListExperiments lists an environment's experiments, newest first.
func (s *Service) ListExperiments(ctx context.Context, p *auth.Principal, envID uuid.UUID) ([]db.Experiment, error) {
	q := db.New(s.pool)
	if _, err := access.Env(ctx, q, p, envID, access.Read); err != nil {
		return nil, err
	}
	out, err := q.ListExperiments(ctx, envID)
	return out, store.AdaptError(err)
}

// GetExperiment returns one experiment.
func (s *Service) GetExperiment(ctx context.Context, p *auth.Principal, envID uuid.UUID, key string) (db.Experiment, error) {
	q := db.New(s.pool)
	if _, err := access.Env(ctx, q, p, envID, access.Read); err != nil {
		return db.Experiment{}, err
	}
	return getExperiment(ctx, q, envID, key)
}

func getExperiment(ctx context.Context, q *db.Queries, envID uuid.UUID, key string) (db.Experiment, error) {
	e, err := q.GetExperiment(ctx, db.GetExperimentParams{EnvironmentID: envID, Key: key})
	if errors.Is(err, pgx.ErrNoRows) {
		return db.Experiment{}, errExperimentNotFound
	}
	return e, store.AdaptError(err)
}

// CreateExperiment creates an experiment, which starts running. Its flag_key
// need not name an existing flag (docs/reference/measurement.md, Experiments).
func (s *Service) CreateExperiment(ctx context.Context, p *auth.Principal, envID uuid.UUID, in ExperimentInput) (db.Experiment, error) {
	var pr apperr.Problems
	for _, k := range []struct{ field, value string }{{"key", in.Key}, {"flag_key", in.FlagKey}, {"goal_event_key", in.GoalEventKey}} {
		if !limits.ValidKey(k.value) {
			pr.Add(k.field, keyRule)
		}
	}
	name := strings.TrimSpace(in.Name)
	if name == "" {
		pr.Add("name", "is required")
	}
	if err := pr.Err(); err != nil {
		return db.Experiment{}, err
	}
	e, err := store.WithTxV(ctx, s.pool, func(q *db.Queries) (db.Experiment, error) {
		if _, err := access.Env(ctx, q, p, envID, access.Write); err != nil {
			return db.Experiment{}, err
		}
		e, err := q.InsertExperiment(ctx, db.InsertExperimentParams{
			EnvironmentID: envID, Key: in.Key, Name: name, Description: in.Description,
			FlagKey: in.FlagKey, GoalEventKey: in.GoalEventKey, ControlVariant: in.ControlVariant,
		})
		if err != nil {
			return db.Experiment{}, err
		}
		return e, keepExperimentCounts(ctx, q, e)
	})
	return e, store.AdaptError(err)
}

// PatchExperiment changes an experiment's status, name, description, goal
// event key or control variant.
func (s *Service) PatchExperiment(ctx context.Context, p *auth.Principal, envID uuid.UUID, key string, in ExperimentPatch) (db.Experiment, error) {
	var pr apperr.Problems
	if in.Status != nil {
		switch *in.Status {
		case ExperimentRunning, ExperimentPaused, ExperimentCompleted:
		default:
			pr.Add("status", "must be running, paused or completed")
		}
	}
	if in.GoalEventKey != nil && !limits.ValidKey(*in.GoalEventKey) {
		pr.Add("goal_event_key", keyRule)
	}
	var name string
	if in.Name != nil {
		if name = strings.TrimSpace(*in.Name); name == "" {
			pr.Add("name", "is required")
		}
	}
	if err := pr.Err(); err != nil {
		return db.Experiment{}, err
	}
	e, err := store.WithTxV(ctx, s.pool, func(q *db.Queries) (db.Experiment, error) {
		if _, err := access.Env(ctx, q, p, envID, access.Write); err != nil {
			return db.Experiment{}, err
		}
		cur, err := q.LockExperiment(ctx, db.LockExperimentParams{EnvironmentID: envID, Key: key})
		if errors.Is(err, pgx.ErrNoRows) {
			return db.Experiment{}, errExperimentNotFound
		}
		if err != nil {
			return db.Experiment{}, err
		}
		up := db.UpdateExperimentParams{
			ID: cur.ID, Name: cur.Name, Description: cur.Description, GoalEventKey: cur.GoalEventKey,
			ControlVariant: cur.ControlVariant, Status: cur.Status,
		}
		if in.Status != nil {
			up.Status = *in.Status
		}
		if in.Name != nil {
			up.Name = name
		}
		if in.GoalEventKey != nil {
			up.GoalEventKey = *in.GoalEventKey
		}
		if in.Description != nil || in.ClearDescription {
			up.Description = in.Description
		}
		if in.ControlVariant != nil || in.ClearControlVariant {
			up.ControlVariant = in.ControlVariant
		}
		e, err := q.UpdateExperiment(ctx, up)
		if err != nil || e.GoalEventKey == cur.GoalEventKey {
			return e, err
		}
		if err := keepExperimentCounts(ctx, q, e); err != nil {
			return db.Experiment{}, err
		}
		return e, dropUnusedExperimentCounts(ctx, q, envID)
	})
	return e, store.AdaptError(err)
}

// DeleteExperiment deletes an experiment; its impressions and events stay.
func (s *Service) DeleteExperiment(ctx context.Context, p *auth.Principal, envID uuid.UUID, key string) error {
	err := store.WithTx(ctx, s.pool, func(q *db.Queries) error {
		if _, err := access.Env(ctx, q, p, envID, access.Write); err != nil {
			return err
		}
		n, err := q.DeleteExperiment(ctx, db.DeleteExperimentParams{EnvironmentID: envID, Key: key})
		if err == nil && n == 0 {
			return errExperimentNotFound
		}
		if err != nil {
			return err
		}
		return dropUnusedExperimentCounts(ctx, q, envID)
	})
	return store.AdaptError(err)
}

// ExperimentResult is the measured outcome of an experiment
// (docs/reference/measurement.md, Experiment results).
type ExperimentResult struct {
	Experiment     db.Experiment
	ControlVariant *string // nil without data
	TotalExposed   int64
	TotalConverted int64
	Variants       []VariantResult // control first, then by value

	// Recomputed reports a result computed from every exposed user, while
	// the counts the fold keeps for the experiment are still being built
	// (experiment_counts.go); otherwise it was read from those counts.
	Recomputed bool
}

// VariantResult is one arm of an experiment compared with the control.
type VariantResult struct {
	Variant   string
	Exposed   int64
	Converted int64
	Rate      float64
	IsControl bool
	stats.Comparison

	// Sequential compares the conversion rates as a relative lift with a
	// confidence sequence and an always-valid p-value at SequentialAlpha;
	// zero (every field nil) for the control.
	Sequential stats.Sequential
}

// SequentialAlpha is the error rate of an experiment result's confidence
// sequence and always-valid p-value: 95% intervals, like the z-test's
// significance level (docs/reference/measurement.md, Experiment results).
const SequentialAlpha = 0.05

// ExperimentResults measures an experiment (docs/reference/measurement.md,
// Attribution and Experiment results): a user enters at first exposure to the
// flag and stays in the variant seen then; anonymous evaluations are excluded;
// a user converted when a goal event of the experiment's key occurred at or
// after that first exposure. The control is the experiment's control_variant
// when it is an arm of the data, else the most-exposed arm (ties: the lowest
// value).
func (s *Service) ExperimentResults(ctx context.Context, p *auth.Principal, envID uuid.UUID, key string) (ExperimentResult, error) {
	return snapshotRead(ctx, s, p, envID, func(q *db.Queries, marks db.GetRollupWatermarksRow) (ExperimentResult, error) {
		e, err := getExperiment(ctx, q, envID, key)
		if err != nil {
			return ExperimentResult{}, err
		}
		arms, recomputed, err := experimentArms(ctx, q, e, marks)
		if err != nil {
			return ExperimentResult{}, err
		}
		out := experimentResult(e, arms)
		out.Recomputed = recomputed
		return out, nil
	})
}

// experimentResult computes the result from the arms, which come ordered by
// value.
func experimentResult(e db.Experiment, arms []db.ListExperimentArmsRow) ExperimentResult {
	out := ExperimentResult{Experiment: e, Variants: []VariantResult{}}
	if len(arms) == 0 {
		return out
	}
	control := -1
	for i, a := range arms {
		out.TotalExposed += a.Exposed
		out.TotalConverted += a.Converted
		if e.ControlVariant != nil && a.Variant == *e.ControlVariant {
			control = i
		}
	}
	if control < 0 {
		control = 0
		for i, a := range arms {
			if a.Exposed > arms[control].Exposed { // strict: ties keep the lowest value
				control = i
			}
		}
	}
	c := arms[control]
	out.ControlVariant = &c.Variant
	base := stats.Arm{Exposed: c.Exposed, Converted: c.Converted}
	for i, a := range arms {
		arm := stats.Arm{Exposed: a.Exposed, Converted: a.Converted}
		v := VariantResult{Variant: a.Variant, Exposed: a.Exposed, Converted: a.Converted, Rate: arm.Rate(), IsControl: i == control}
		if !v.IsControl {
			v.Comparison = stats.Compare(arm, base)
			v.Sequential = stats.CompareSequential(
				stats.ConversionSummary(a.Exposed, a.Converted), stats.ConversionSummary(c.Exposed, c.Converted),
				SequentialAlpha)
		}
		out.Variants = append(out.Variants, v)
	}
	sort.SliceStable(out.Variants, func(i, j int) bool {
		return out.Variants[i].IsControl && !out.Variants[j].IsControl
	})
	return out
}
