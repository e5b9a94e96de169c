package worker_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard/switchyard/server/worker"
)

func TestLoopRunsWhileThereIsWorkAndStops(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	idle := make(chan struct{}, 1)
	step := func(ctx context.Context) (bool, error) {
		n := calls.Add(1)
		switch {
		case n == 2:
			return false, errors.New("transient") // an error pauses, then the loop goes on
		case n < 5:
			return true, nil
		}
		select {
		case idle <- struct{}{}:
		default:
		}
		return false, nil
	}
	stop := worker.New("test", step, worker.LoopConfig{Interval: time.Millisecond}).Start(context.Background())
	select {
	case <-idle:
	case <-time.After(10 * time.Second):
		t.Fatal("the loop never went idle")
	}
	stop()
	after := calls.Load()
	if after < 5 {
		t.Errorf("%d calls, want at least 5", after)
	}
	// Stopped means stopped: no call after stop returned.
	deadline := time.Now().Add(50 * time.Millisecond)
	for time.Now().Before(deadline) {
		if calls.Load() != after {
			t.Fatal("the loop ran after stop")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestLoopStopsWithItsContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	l := worker.New("test", func(context.Context) (bool, error) { return false, nil }, worker.LoopConfig{})
	go func() { l.Run(ctx); close(done) }()
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
}
