package ofrep

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Streams woken together share reads, and every stream gets a read that
// started after it arrived: it never sends a tag older than its change.
func TestEnvReadsCoalesceAndAreFresh(t *testing.T) {
	var e envReads
	var version, reads atomic.Int64
	read := func(context.Context) (Environment, error) {
		reads.Add(1)
		v := version.Load()
		time.Sleep(time.Millisecond) // a read that takes a while, so callers pile up
		return Environment{Tag: strconv.FormatInt(v, 10)}, nil
	}
	const streams = 200
	var wg sync.WaitGroup
	stop := make(chan struct{})
	go func() { // changes keep coming while the streams read
		for {
			select {
			case <-stop:
				return
			default:
				version.Add(1)
				time.Sleep(100 * time.Microsecond)
			}
		}
	}()
	for range streams {
		wg.Go(func() {
			for range 20 {
				woken := version.Load()
				env, err := e.get(context.Background(), read)
				if err != nil {
					t.Error(err)
					return
				}
				if got, _ := strconv.ParseInt(env.Tag, 10, 64); got < woken {
					t.Errorf("read version %d, older than the change %d that woke the stream", got, woken)
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	if n := reads.Load(); n >= streams*20/4 {
		t.Errorf("%d reads for %d wake-ups: not coalesced", n, streams*20)
	}
	t.Logf("%d reads for %d wake-ups", reads.Load(), streams*20)
}

// A stream that leaves stops waiting; the shared read goes on for the rest.
func TestEnvReadsCallerCancellation(t *testing.T) {
	var e envReads
	release := make(chan struct{})
	read := func(ctx context.Context) (Environment, error) {
		<-release
		return Environment{Tag: "t"}, ctx.Err()
	}
	leader := make(chan error, 1)
	lctx, lcancel := context.WithCancel(context.Background())
	go func() { _, err := e.get(lctx, read); leader <- err }()
	for { // wait until the leader's read runs
		e.mu.Lock()
		running := e.running != nil
		e.mu.Unlock()
		if running {
			break
		}
		time.Sleep(time.Millisecond)
	}
	lcancel() // the leader's client leaves: the read must not fail for others
	// b waits for the running read to end, then leads the next; c joins b's.
	next := make(chan error, 1)
	go func() { _, err := e.get(context.Background(), read); next <- err }()
	for { // wait until b leads the next read
		e.mu.Lock()
		waiting := e.next != nil
		e.mu.Unlock()
		if waiting {
			break
		}
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithCancel(context.Background())
	joined := make(chan error, 1)
	go func() { _, err := e.get(ctx, read); joined <- err }()
	cancel()
	if err := <-joined; err != context.Canceled {
		t.Errorf("cancelled caller: %v", err)
	}
	close(release)
	if err := <-leader; err != nil {
		t.Errorf("leader's read failed with its own cancellation: %v", err)
	}
	if err := <-next; err != nil {
		t.Errorf("next read: %v", err)
	}
	if env, err := e.get(context.Background(), read); err != nil || env.Tag != "t" {
		t.Errorf("later read: %v %v", env, err)
	}
}
