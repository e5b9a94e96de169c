package worker

import (
	"context"
	"log/slog"
	"time"
)

// Step does one unit of work and reports whether there may be more right
// away (it found something to do).
type Step func(ctx context.Context) (more bool, err error)

// Loop calls a Step until its context ends.
type Loop struct {
	name     string
	step     Step
	interval time.Duration
	logger   *slog.Logger
}

// LoopConfig holds a Loop's optional settings; its zero value works.
type LoopConfig struct {
	Interval time.Duration // pause when idle or after an error; one second when zero
	Logger   *slog.Logger  // discarded when nil
}

// New returns a loop named name (for the log) around step.
func New(name string, step Step, cfg LoopConfig) *Loop {
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Loop{name: name, step: step, interval: cfg.Interval, logger: cfg.Logger}
}

// Run works until ctx ends: it calls the step back to back while there is
// work, and waits one interval when there is none or the step failed.
func (l *Loop) Run(ctx context.Context) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		for ctx.Err() == nil {
			more, err := l.step(ctx)
			if err != nil {
				if ctx.Err() == nil {
					l.logger.WarnContext(ctx, "worker step failed", "worker", l.name, "err", err.Error())
				}
				break
			}
			if !more {
				break
			}
		}
		timer.Reset(l.interval)
	}
}

// Start runs the loop in a goroutine and returns a function that stops it
// and waits for it to return.
func (l *Loop) Start(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.Run(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}
