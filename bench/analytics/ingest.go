package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

const batchSize = 500

// generator makes the per-evaluation senders' impressions, as bench/ingest
// does: uniformly random flags and users (so almost every impression is a
// new (flag, user): the fold's worst case), booleans for most flags and
// three string variants for every fifth, 3 % anonymous.
type generator struct {
	flags, users int
	now          time.Time
	spread       time.Duration // evaluated_at falls in [now-spread, now)
}

type impression struct {
	FlagKey     string    `json:"flag_key"`
	UserID      *string   `json:"user_id,omitempty"`
	Value       string    `json:"value"`
	EvaluatedAt time.Time `json:"evaluated_at"`
}

func (g generator) impression(r *rand.Rand) impression {
	f := r.IntN(g.flags)
	u := r.IntN(g.users)
	im := impression{FlagKey: fmt.Sprintf("flag-%02d", f), EvaluatedAt: g.now.Add(-time.Duration(r.Int64N(int64(g.spread))))}
	if f%5 == 0 {
		im.Value = []string{"control", "variant-a", "variant-b"}[(u*7+f)%3]
	} else {
		im.Value = []string{"true", "false"}[(u+f)%2]
	}
	if r.IntN(100) >= 3 {
		id := fmt.Sprintf("user-%06d", u)
		im.UserID = &id
	}
	return im
}

func (g generator) batch(r *rand.Rand, n int) []impression {
	out := make([]impression, n)
	for i := range out {
		out[i] = g.impression(r)
	}
	return out
}

// readQuery is one of the reads timed under load.
type readQuery struct {
	name, path string
}

// ingestResult is one HTTP ingest run.
type ingestResult struct {
	rows                     int // rows sent
	acked, visible, lastPoll time.Duration
	overshoot                int64
	reads                    map[string][]time.Duration // reads that started before the rows were visible
	trace                    []string                   // every such read: when it began, what, how long
	backlogAtAck             int64                      // impressions not yet folded when the last batch was acknowledged
	cpu                      cpuUse                     // from the first batch until the rows were visible and the reads ended
}

// httpIngest posts the bodies with o.writers writers and polls
// GET …/impressions until its total has grown by the rows sent;
// withReaders runs o.readers readers meanwhile, each cycling through
// queries, and goes on sending the bodies again until o.loadTime has
// passed, so that the reads under load are many.
func httpIngest(ctx context.Context, o options, fx *fixture, env string, bodies [][]byte, withReaders bool, queries []readQuery) (ingestResult, error) {
	var res ingestResult
	listPath := fx.envPath(env) + "/impressions?limit=1"
	total := func() (int64, error) {
		var page struct {
			Total int64 `json:"total"`
		}
		err := fx.call(ctx, fx.token, http.MethodGet, listPath, nil, http.StatusOK, &page)
		return page.Total, err
	}
	base, err := total()
	if err != nil {
		return res, err
	}
	url := fx.envPath(env) + "/impressions"
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	res.reads = map[string][]time.Duration{}
	var readErr error
	start := time.Now()
	var visibleAt atomic.Int64 // ns since start; 0 until visible
	if withReaders {
		for k := range o.readers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := k; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					q := queries[i%len(queries)]
					s := time.Now()
					err := fx.call(ctx, fx.token, http.MethodGet, q.path, nil, http.StatusOK, nil)
					d := time.Since(s)
					mu.Lock()
					if err != nil && readErr == nil {
						readErr = err
					}
					// Reads that began while the rows were not all visible
					// are the reads under load.
					if v := visibleAt.Load(); v == 0 || s.Sub(start) < time.Duration(v) {
						res.reads[q.name] = append(res.reads[q.name], d)
						res.trace = append(res.trace, fmt.Sprintf("+%.1fs %s %s", s.Sub(start).Seconds(), q.name, ms(d)))
					}
					mu.Unlock()
				}
			}()
		}
	}
	var until time.Time
	if withReaders {
		until = start.Add(o.loadTime)
	}
	var sent atomic.Int64
	res.acked, err = eachUntil(o.writers, len(bodies), until, func(_, i int) error {
		if err := fx.call(ctx, fx.keys[env], http.MethodPost, url, bodies[i%len(bodies)], http.StatusNoContent, nil); err != nil {
			return err
		}
		sent.Add(batchSize)
		return nil
	})
	res.rows = int(sent.Load())
	rows := res.rows
	if imps, _, _, err := fx.backlog(ctx); err == nil {
		res.backlogAtAck = imps
	}
	if err != nil {
		close(stop)
		wg.Wait()
		return res, fmt.Errorf("http ingest: %w", err)
	}
	for {
		s := time.Now()
		got, err := total()
		if err != nil {
			close(stop)
			wg.Wait()
			return res, err
		}
		if got >= base+int64(rows) {
			res.visible = time.Since(start)
			res.lastPoll = time.Since(s)
			res.overshoot = got - base - int64(rows)
			visibleAt.Store(int64(res.visible))
			break
		}
		if time.Since(start) > 30*time.Minute {
			close(stop)
			wg.Wait()
			return res, fmt.Errorf("only %d of %d rows visible after 30 minutes", got-base, rows)
		}
		time.Sleep(20 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	return res, readErr
}

// each calls fn for every batch index in 0..batches-1 across w workers
// (fn learns which worker runs it) and returns the wall time.
func each(w, batches int, fn func(worker, i int) error) (time.Duration, error) {
	return eachUntil(w, batches, time.Time{}, fn)
}

// eachUntil is each that goes on past batches (i counting up) until the
// time until.
func eachUntil(w, batches int, until time.Time, fn func(worker, i int) error) (time.Duration, error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, w)
	start := time.Now()
	for k := range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= batches && !time.Now().Before(until) {
					return
				}
				if err := fn(k, i); err != nil {
					errs[k] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	for _, err := range errs {
		if err != nil {
			return 0, err
		}
	}
	return elapsed, nil
}

// quantile is the q-quantile (nearest rank) of ds.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(q*float64(len(s))+0.999999) - 1
	return s[min(max(i, 0), len(s)-1)]
}
