package sdkgo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchyard/switchyard/sdkgo/eval"
	"github.com/switchyard/switchyard/sdkgo/internal/events"
	"github.com/switchyard/switchyard/sdkgo/internal/exposure"
	"github.com/switchyard/switchyard/sdkgo/internal/sse"
	"github.com/switchyard/switchyard/sdkgo/internal/store"
)

// ErrNotReady is returned by New when no flags arrived within the init
// timeout. The client it returns with the error works: it serves defaults
// and keeps connecting.
var ErrNotReady = errors.New("switchyard: flags not received within the init timeout")

// State is the connection state of a client.
type State string

// The states.
const (
	StateConnecting State = "connecting" // no stream yet, or reconnecting
	StateStreaming  State = "streaming"  // the stream is up and bootstrapped
	StatePolling    State = "polling"    // the stream keeps failing; polling the snapshot
	StateClosed     State = "closed"
)

// Client evaluates flags locally from an in-memory copy that the server
// keeps current over a stream. Evaluation never blocks and never touches
// the network; attributes never leave the process.
type Client struct {
	cfg    config
	sdkKey string
	store  store.Store
	queue  *events.Queue
	seen   *exposure.Memory // the (flag, user, value) triples reported as impressions

	ready     chan struct{}
	readyOnce sync.Once
	state     atomic.Value // State

	reconnects atomic.Int64
	polls      atomic.Int64

	cancel context.CancelFunc
	wg     sync.WaitGroup
	closed atomic.Bool
}

// New connects to the server with an SDK key and waits until the flags
// have arrived (or the init timeout passed, or ctx ended: then it returns
// the working client and ErrNotReady).
func New(ctx context.Context, sdkKey string, opts ...Option) (*Client, error) {
	cfg := defaults()
	for _, o := range opts {
		o(&cfg)
	}
	cfg.baseURL = strings.TrimRight(cfg.baseURL, "/")
	if !strings.HasPrefix(sdkKey, "sk_live_") {
		return nil, fmt.Errorf("switchyard: %q is not an SDK key (sk_live_…)", prefix(sdkKey))
	}
	c := &Client{cfg: cfg, sdkKey: sdkKey, ready: make(chan struct{})}
	c.state.Store(StateConnecting)
	c.seen = exposure.New(cfg.exposureMemory)
	c.queue = events.New(events.Config{
		Capacity: cfg.eventCapacity, FlushInterval: cfg.flushInterval, Logger: cfg.logger,
		Ready:  func() bool { return c.store.EnvironmentID() != "" },
		Post:   c.post,
		Unsent: c.forget,
	})
	runCtx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	c.wg.Add(1)
	go c.run(runCtx)

	timer := time.NewTimer(cfg.initTimeout)
	defer timer.Stop()
	select {
	case <-c.ready:
		return c, nil
	case <-timer.C:
	case <-ctx.Done():
	}
	return c, ErrNotReady
}

// Ready is closed once flags have arrived (from the stream or a snapshot).
func (c *Client) Ready() <-chan struct{} { return c.ready }

// Stats are the client's counters, for observability.
//
// Every evaluation of an existing flag is reported exactly once, as an
// impression or as a summary count (docs/sdk.md, Reporting), so
// Evaluations = Impressions + Summarised, Impressions = ImpressionsQueued +
// ImpressionsSent + ImpressionsDropped, and Summarised = SummarisedQueued +
// SummarisedSent + SummarisedDropped. After Close nothing is queued.
type Stats struct {
	State         State
	Reconnects    int64 // stream connections after the first
	Polls         int64 // snapshot requests made while the stream was down
	EventsSent    int64 // impressions and goal events the server accepted
	EventsDropped int64 // impressions and goal events dropped: queue full, or a batch the server did not take
	Flags         int

	Evaluations        int64 // evaluations reported: Impressions + Summarised
	Impressions        int64 // evaluations reported as an impression (first of a (flag, user, value) in the exposure memory)
	ImpressionsQueued  int64 // of them, waiting to be sent
	ImpressionsSent    int64 // of them, accepted by the server
	ImpressionsDropped int64 // of them, dropped: queue full, batch not accepted, or unsent at Close
	Summarised         int64 // evaluations reported as a summary count (anonymous, or a remembered (flag, user, value))
	SummarisedQueued   int64 // of them, waiting to be sent
	SummarisedSent     int64 // of them, in summaries the server accepted
	SummarisedDropped  int64 // of them, dropped: too many summary rows waiting, batch not accepted, or unsent at Close
	SummariesSent      int64 // summary rows the server accepted
	ExposureMemory     int   // (flag, user, value) triples remembered now; at most WithExposureMemory
}

// Stats returns the current counters.
func (c *Client) Stats() Stats {
	q := c.queue.Counters()
	return Stats{
		State: c.state.Load().(State), Reconnects: c.reconnects.Load(), Polls: c.polls.Load(),
		EventsSent: q.Sent, EventsDropped: q.Dropped, Flags: c.store.Snapshot().Len(),
		Evaluations: q.Impressions + q.Summarised,
		Impressions: q.Impressions, ImpressionsQueued: q.Impressions - q.ImpressionsSent - q.ImpressionsDropped,
		ImpressionsSent: q.ImpressionsSent, ImpressionsDropped: q.ImpressionsDropped,
		Summarised: q.Summarised, SummarisedQueued: q.Summarised - q.SummarisedSent - q.SummarisedDropped,
		SummarisedSent: q.SummarisedSent, SummarisedDropped: q.SummarisedDropped,
		SummariesSent: q.SummaryRowsSent, ExposureMemory: c.seen.Len(),
	}
}

// Flush sends every impression, summary and goal event reported so far and
// returns when the server has answered: nil when it accepted everything, so
// that a read starting afterwards sees all of it. A batch the server does
// not accept is dropped and counted, as on the timer. Flush does not wait
// for the environment to become known (an error says so) and fails after
// Close.
func (c *Client) Flush(ctx context.Context) error {
	if err := c.queue.Flush(ctx); err != nil {
		return fmt.Errorf("switchyard: flush: %w", err)
	}
	return nil
}

// Close stops streaming and polling, sends the queued impressions,
// summaries and goal events (within ctx) and returns when every goroutine
// of the client has ended. Evaluations after Close are not sent; they are
// counted as dropped.
func (c *Client) Close(ctx context.Context) error {
	if c.closed.Swap(true) {
		return nil
	}
	c.cancel()
	c.wg.Wait()
	c.queue.Close(ctx)
	c.state.Store(StateClosed)
	return nil
}

func (c *Client) markReady() { c.readyOnce.Do(func() { close(c.ready) }) }

// run keeps a stream open: reconnecting with jittered exponential backoff,
// and polling the snapshot while the stream has failed pollAfterFailures
// times in a row (docs/reference/stream.md, Reconnect and Snapshot).
func (c *Client) run(ctx context.Context) {
	defer c.wg.Done()
	var pollCancel context.CancelFunc
	stopPolling := func() {
		if pollCancel != nil {
			pollCancel()
			pollCancel = nil
		}
	}
	defer stopPolling()
	failures := 0
	backoff := c.cfg.backoffMin
	for attempt := 0; ctx.Err() == nil; attempt++ {
		if attempt > 0 {
			c.reconnects.Add(1)
		}
		reachedReady, err := c.stream(ctx, stopPolling)
		if ctx.Err() != nil {
			return
		}
		if reachedReady {
			failures, backoff = 0, c.cfg.backoffMin
		} else {
			failures++
		}
		c.cfg.logger.Info("switchyard: stream ended; reconnecting", "err", fmt.Sprint(err), "failures", failures)
		if failures >= c.cfg.pollAfterFailures && pollCancel == nil {
			pollCancel = c.startPolling(ctx)
		} else if pollCancel == nil {
			c.state.Store(StateConnecting)
		}
		wait := backoff/2 + rand.N(backoff/2+1) // jitter: [backoff/2, backoff]
		backoff = min(backoff*2, c.cfg.backoffMax)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// stream runs one stream connection until it ends; it reports whether the
// bootstrap completed.
func (c *Client) stream(ctx context.Context, onReady func()) (bool, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.cfg.baseURL+"/stream", nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Authorization", "Bearer "+c.sdkKey)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.cfg.httpClient.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("stream answered %s", resp.Status)
	}
	// A stream that says nothing, not even a keep-alive, is dead.
	idle := time.AfterFunc(c.cfg.readTimeout, cancel)
	defer idle.Stop()
	r := sse.NewReader(resp.Body)
	ready := false
	for {
		ev, err := r.Next()
		if err != nil {
			return ready, err
		}
		idle.Reset(c.cfg.readTimeout)
		if ev.Comment {
			continue
		}
		switch ev.Name {
		case "connected":
			var m struct {
				EnvironmentID *string `json:"environment_id"`
			}
			if err := json.Unmarshal([]byte(ev.Data), &m); err != nil {
				return ready, fmt.Errorf("malformed connected event: %w", err)
			}
			if m.EnvironmentID != nil {
				c.store.SetEnvironmentID(*m.EnvironmentID)
			}
			c.store.Begin()
		case "update":
			if err := c.applyUpdate(ev.Data); err != nil {
				return ready, err // any malformed event drops the connection
			}
		case "ready":
			c.store.Ready()
			ready = true
			c.state.Store(StateStreaming)
			onReady()
			c.markReady()
		}
	}
}

func (c *Client) applyUpdate(data string) error {
	var u struct {
		Type string     `json:"type"`
		Flag *eval.Flag `json:"flag"`
		Key  string     `json:"key"`
	}
	if err := json.Unmarshal([]byte(data), &u); err != nil {
		return fmt.Errorf("malformed update: %w", err)
	}
	switch {
	case u.Type == "UPSERT" && u.Flag != nil && u.Flag.Key != "":
		c.store.Upsert(*u.Flag)
	case u.Type == "DELETE" && u.Key != "":
		c.store.Delete(u.Key)
	default:
		return fmt.Errorf("malformed update of type %q", u.Type)
	}
	return nil
}

// startPolling starts the snapshot poller; the returned function stops it.
func (c *Client) startPolling(ctx context.Context) context.CancelFunc {
	pctx, cancel := context.WithCancel(ctx)
	c.state.Store(StatePolling)
	c.wg.Add(1)
	go c.poll(pctx)
	return cancel
}

// poll fetches the snapshot on a timer, with ETag, until ctx ends (the
// stream is back or the client closes).
func (c *Client) poll(ctx context.Context) {
	defer c.wg.Done()
	etag := ""
	for {
		if tag, err := c.fetchSnapshot(ctx, etag); err != nil {
			if ctx.Err() != nil {
				return
			}
			c.cfg.logger.Warn("switchyard: snapshot poll failed", "err", err.Error())
		} else {
			etag = tag
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(c.cfg.pollInterval):
		}
	}
}

func (c *Client) fetchSnapshot(ctx context.Context, etag string) (string, error) {
	c.polls.Add(1)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.cfg.baseURL+"/flags/snapshot", nil)
	if err != nil {
		return etag, err
	}
	req.Header.Set("Authorization", "Bearer "+c.sdkKey)
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	resp, err := c.cfg.httpClient.Do(req)
	if err != nil {
		return etag, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusNotModified:
		return etag, nil
	case http.StatusOK:
	default:
		return etag, fmt.Errorf("snapshot answered %s", resp.Status)
	}
	var flags []eval.Flag
	if err := json.NewDecoder(resp.Body).Decode(&flags); err != nil {
		return etag, fmt.Errorf("decode snapshot: %w", err)
	}
	c.store.SetEnvironmentID(resp.Header.Get("X-Service-Environment-Id"))
	c.store.Replace(flags)
	c.markReady()
	return resp.Header.Get("ETag"), nil
}

// post sends one batch of impressions or goal events.
func (c *Client) post(ctx context.Context, kind string, body []byte) error {
	url := c.cfg.baseURL + "/api/environments/" + c.store.EnvironmentID() + "/" + kind
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.sdkKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.cfg.httpClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s answered %s", kind, resp.Status)
	}
	return nil
}

func prefix(s string) string {
	if len(s) > 12 {
		return s[:12] + "…"
	}
	return s
}
