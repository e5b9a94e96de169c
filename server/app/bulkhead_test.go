package app_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/switchyard/switchyard/server/internal/apptest"
)

// Measurement reads run on connections of their own, each statement
// bounded: while twenty of them are held up (a lock on the fold's
// watermarks, which every measurement read takes first), flag writes keep
// their usual latency, and the held reads end with 503 at their timeout
// rather than holding on.
func TestSlowMeasurementReadsDoNotHoldUpWrites(t *testing.T) {
	t.Parallel()
	const timeout = 3 * time.Second
	s := apptest.Start(t, map[string]string{"MEASURE_READ_CONNECTIONS": "2", "MEASURE_READ_TIMEOUT": timeout.String()})
	_, token := s.User(t, "ada@example.com", "admin")
	_, envs := s.DefaultProject(t)
	env := envs["production"].String()
	flags := "/api/environments/" + env + "/flags"
	if status, raw, _ := s.Do(t, apptest.Request{Method: "POST", Path: flags, Bearer: token, Body: map[string]any{"key": "hot", "is_enabled": true}}); status != 200 {
		t.Fatalf("create = %d %s", status, raw)
	}
	patch := func(i int) time.Duration {
		start := time.Now()
		if status, raw, _ := s.Do(t, apptest.Request{Method: "PATCH", Path: flags + "/hot", Bearer: token, Body: map[string]any{"rollout_percentage": i}}); status != 200 {
			t.Fatalf("patch = %d %s", status, raw)
		}
		return time.Since(start)
	}
	var idle time.Duration
	for i := range 20 {
		idle = max(idle, patch(i))
	}

	tx, err := s.DB(t).Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(t.Context()) }()
	if _, err := tx.Exec(t.Context(), "LOCK TABLE rollup_watermarks IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	statuses := make(chan int, 20)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := "/api/environments/" + env + "/flag-status"
			if i%2 == 1 {
				path = "/api/environments/" + env + "/impressions/stats"
			}
			status, _, _ := s.Do(t, apptest.Request{Method: "GET", Path: path, Bearer: token})
			statuses <- status
		}()
	}
	time.Sleep(300 * time.Millisecond) // the reads are waiting on the lock
	var held time.Duration
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		for i := range 20 {
			held = max(held, patch(50+i))
		}
	}()
	select {
	case <-wrote:
	case <-time.After(2 * timeout):
		// Writes queue behind the reads for connections: let go, or they
		// never end.
		t.Errorf("flag writes did not finish within %v while measurement reads were held up", 2*timeout)
		_ = tx.Rollback(t.Context())
		<-wrote
	}
	wg.Wait()
	close(statuses)
	counts := map[int]int{}
	for st := range statuses {
		counts[st]++
	}
	t.Logf("slowest flag write: idle %v, with 20 measurement reads held up %v; the reads answered %v", idle, held, counts)
	if held > idle+500*time.Millisecond {
		t.Errorf("flag writes took up to %v while measurement reads were held up (idle %v)", held, idle)
	}
	if counts[http.StatusServiceUnavailable] != 20 {
		t.Errorf("held reads answered %v; want 503 at their %v timeout, every one", counts, timeout)
	}
	_ = tx.Rollback(t.Context())
	for _, path := range []string{"/flag-status", "/impressions/stats"} {
		if status, raw, _ := s.Do(t, apptest.Request{Method: "GET", Path: "/api/environments/" + env + path, Bearer: token}); status != 200 {
			t.Errorf("after the lock, %s = %d %s", path, status, raw)
		}
	}
}
