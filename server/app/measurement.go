package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/switchyard/switchyard/server/measure"
	"github.com/switchyard/switchyard/server/worker"
)

// statisticsInterval is how often the measurement tables' planner
// statistics are looked at (docs/architecture.md, Measurement).
const statisticsInterval = time.Minute

// refreshStatistics is the loop that keeps the planner's statistics of the
// measurement tables current as they grow (measure.RefreshStatistics).
func refreshStatistics(meas *measure.Service, interval time.Duration, logger *slog.Logger) *worker.Loop {
	if interval <= 0 || interval > statisticsInterval {
		interval = statisticsInterval
	}
	return worker.New("measurement statistics", func(ctx context.Context) (bool, error) {
		names, err := meas.RefreshStatistics(ctx)
		if len(names) > 0 {
			logger.Info("refreshed planner statistics", "tables", names)
		}
		return false, err
	}, worker.LoopConfig{Interval: interval, Logger: logger})
}

// countExperiments is the loop that builds the kept counts of new
// experiment metrics (measure.BuildExperimentCounts), one after another,
// looking for them every interval (one second by default).
func countExperiments(meas *measure.Service, interval time.Duration, logger *slog.Logger) *worker.Loop {
	return worker.New("experiment counts", func(ctx context.Context) (bool, error) {
		start := time.Now()
		built, err := meas.BuildExperimentCounts(ctx)
		if built {
			logger.Info("built experiment counts", "took", time.Since(start).String())
		}
		return built, err
	}, worker.LoopConfig{Interval: interval, Logger: logger})
}

// WithoutExperimentCounts starts no builder of experiment counts: results
// stay computed from every exposed user until an instance with one runs.
// Tests use it to read results the way the server does while it builds.
func WithoutExperimentCounts() Option {
	return func(o *options) { o.noExperimentCounts = true }
}
