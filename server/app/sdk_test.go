package app_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	of "github.com/open-feature/go-sdk/openfeature"

	"github.com/switchyard/switchyard/sdkgo"
	"github.com/switchyard/switchyard/sdkgo/eval"
	sdkof "github.com/switchyard/switchyard/sdkgo/openfeature"
)

// flakyProxy sits between an SDK client and the server so a test can cut
// open streams and refuse new ones, while the snapshot keeps working.
type flakyProxy struct {
	*httptest.Server
	streamDown atomic.Bool
	mu         sync.Mutex
	cancels    []context.CancelFunc
}

func newFlakyProxy(t *testing.T, target string) *flakyProxy {
	t.Helper()
	u, _ := url.Parse(target)
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1 // stream events straight through
	p := &flakyProxy{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stream" {
			if p.streamDown.Load() {
				http.Error(w, "stream unavailable", http.StatusServiceUnavailable)
				return
			}
			ctx, cancel := context.WithCancel(r.Context())
			p.mu.Lock()
			p.cancels = append(p.cancels, cancel)
			p.mu.Unlock()
			r = r.WithContext(ctx)
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

// cut ends every open stream.
func (p *flakyProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.cancels {
		c()
	}
	p.cancels = nil
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// sdkLeftovers lists goroutines still running SDK code.
func sdkLeftovers() string {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "switchyard/sdkgo.") || strings.Contains(g, "switchyard/sdkgo/internal") {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}

func TestSDKAgainstTheServer(t *testing.T) {
	fe := newFlagEnv(t)
	prod := uuid.MustParse(fe.envs["production"])
	key := fe.s.SDKKey(t, prod)
	base := fe.flags("production")
	fe.call(t, "POST", base, map[string]any{"key": "checkout", "is_enabled": true,
		"rules": []any{map[string]any{"attribute": "plan", "operator": "equals", "values": []string{"pro"}}}, "rollout_percentage": 0})
	fe.call(t, "POST", base, map[string]any{"key": "color", "is_enabled": true, "flag_type": "string", "default_value": "blue"})
	fe.call(t, "POST", base, map[string]any{"key": "limit", "is_enabled": true, "flag_type": "integer", "default_value": 10})
	fe.call(t, "POST", base, map[string]any{"key": "layout", "is_enabled": true, "flag_type": "json", "default_value": map[string]any{"cols": 3}})

	proxy := newFlakyProxy(t, fe.s.URL)
	transport := &http.Transport{}
	client, err := sdkgo.New(context.Background(), key,
		sdkgo.WithBaseURL(proxy.URL), sdkgo.WithHTTPClient(&http.Client{Transport: transport}),
		sdkgo.WithBackoff(10*time.Millisecond, 50*time.Millisecond), sdkgo.WithPolling(3, 50*time.Millisecond),
		sdkgo.WithEvents(50*time.Millisecond, 1000))
	if err != nil {
		t.Fatalf("New: %v", err)
	}

	// Bootstrap: typed evaluation, all local.
	if !client.Bool("checkout", "u1", map[string]any{"plan": "pro"}, false) || client.Bool("checkout", "u1", map[string]any{"plan": "free"}, true) {
		t.Error("checkout: the rule did not decide")
	}
	if d := client.Detail("checkout", "u1", map[string]any{"plan": "pro"}); d.Reason != eval.ReasonRuleMatch || d.RuleIndex != 0 {
		t.Errorf("detail = %+v, want RULE_MATCH on rule 0", d)
	}
	if got := client.String("color", "u1", nil, "x"); got != "blue" {
		t.Errorf("color = %q", got)
	}
	if got := client.Int("limit", "u1", nil, -1); got != 10 {
		t.Errorf("limit = %d", got)
	}
	if got, _ := client.JSON("layout", "u1", nil, nil).(map[string]any); got["cols"] != float64(3) {
		t.Errorf("layout = %v", got)
	}
	if client.Bool("missing", "u1", nil, true) != true || client.String("limit", "u1", nil, "fallback") != "fallback" {
		t.Error("missing or mistyped flags must return the fallback")
	}

	// Live update.
	fe.call(t, "PATCH", base+"/color", map[string]any{"default_value": "green"})
	eventually(t, "the patch reaches the client", func() bool { return client.String("color", "u1", nil, "") == "green" })

	// The server side ends the stream: the client reconnects and replays.
	before := client.Stats().Reconnects
	proxy.cut()
	eventually(t, "the client reconnects", func() bool { return client.Stats().Reconnects > before && client.Stats().State == sdkgo.StateStreaming })
	fe.call(t, "PATCH", base+"/color", map[string]any{"default_value": "teal"})
	eventually(t, "updates flow after the reconnect", func() bool { return client.String("color", "u1", nil, "") == "teal" })

	// The stream keeps failing: after 3 failed reconnects the client polls.
	proxy.streamDown.Store(true)
	proxy.cut()
	eventually(t, "the client falls back to polling", func() bool { return client.Stats().State == sdkgo.StatePolling })
	fe.call(t, "PATCH", base+"/color", map[string]any{"default_value": "red"})
	eventually(t, "polling delivers the change", func() bool { return client.String("color", "u1", nil, "") == "red" })
	// The stream comes back: polling stops.
	proxy.streamDown.Store(false)
	eventually(t, "the stream returns", func() bool { return client.Stats().State == sdkgo.StateStreaming })
	polls := client.Stats().Polls
	time.Sleep(200 * time.Millisecond) // four poll intervals
	if client.Stats().Polls != polls {
		t.Error("the client kept polling after the stream returned")
	}

	// OpenFeature, for the four types.
	p := sdkof.NewProvider(client)
	ctx := context.Background()
	flat := of.FlattenedContext{of.TargetingKey: "u1", "plan": "pro"}
	if r := p.BooleanEvaluation(ctx, "checkout", false, flat); !r.Value || r.Reason != of.TargetingMatchReason {
		t.Errorf("boolean = %+v", r)
	}
	if r := p.StringEvaluation(ctx, "color", "x", flat); r.Value != "red" || r.Reason != of.DefaultReason {
		t.Errorf("string = %+v", r)
	}
	if r := p.IntEvaluation(ctx, "limit", 0, flat); r.Value != 10 {
		t.Errorf("int = %+v", r)
	}
	if r := p.FloatEvaluation(ctx, "limit", 0, flat); r.Value != 10 {
		t.Errorf("float = %+v", r)
	}
	if r := p.ObjectEvaluation(ctx, "layout", nil, flat); r.Value.(map[string]any)["cols"] != float64(3) {
		t.Errorf("object = %+v", r)
	}
	if r := p.BooleanEvaluation(ctx, "missing", true, flat); !r.Value || r.ResolutionError.Error() == "" || !strings.Contains(r.ResolutionError.Error(), string(of.FlagNotFoundCode)) {
		t.Errorf("missing flag = %+v, want the default and FLAG_NOT_FOUND", r)
	}
	if r := p.IntEvaluation(ctx, "color", 7, flat); r.Value != 7 || !strings.Contains(r.ResolutionError.Error(), string(of.TypeMismatchCode)) {
		t.Errorf("mistyped flag = %+v, want the default and TYPE_MISMATCH", r)
	}

	// Goal events, then Close flushes everything and leaves nothing running.
	client.Track("u1", "purchase", 42.5)
	if err := client.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	transport.CloseIdleConnections()
	eventually(t, "no SDK goroutine is left", func() bool { return sdkLeftovers() == "" })
	var impressions, goals int
	var value float64
	db := fe.s.DB(t)
	if err := db.QueryRow(ctx, `SELECT count(*) FROM impressions WHERE environment_id = $1 AND flag_key = 'checkout' AND user_id = 'u1' AND value = 'true'`, prod).Scan(&impressions); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(ctx, `SELECT count(*), coalesce(max(value), 0) FROM goal_events WHERE environment_id = $1 AND event_key = 'purchase' AND user_id = 'u1'`, prod).Scan(&goals, &value); err != nil {
		t.Fatal(err)
	}
	// u1 evaluated checkout many times: the first is an impression, the
	// rest summary counts (docs/reference/measurement.md, Reporting once).
	if impressions != 1 || goals != 1 || value != 42.5 {
		t.Errorf("in the database: %d checkout=true impressions of u1, %d purchase events (value %v); want 1 and 1 (42.5)", impressions, goals, value)
	}
	// Every evaluation is in the database exactly once.
	var stored int64
	if err := db.QueryRow(ctx, `SELECT (SELECT count(*) FROM impressions WHERE environment_id = $1)
		+ (SELECT coalesce(sum(count), 0) FROM impression_summaries WHERE environment_id = $1)`, prod).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	st := client.Stats()
	if st.Evaluations == 0 || stored != st.Evaluations || st.ImpressionsSent+st.SummarisedSent != st.Evaluations || st.SummarisedSent == 0 {
		t.Errorf("stored %d evaluations; the client's stats: %+v", stored, st)
	}
}

func TestSDKNewWithoutAServer(t *testing.T) {
	t.Parallel()
	start := time.Now()
	c, err := sdkgo.New(context.Background(), "sk_live_nothing_listens", sdkgo.WithBaseURL("http://127.0.0.1:1"), sdkgo.WithInitTimeout(100*time.Millisecond))
	if !errors.Is(err, sdkgo.ErrNotReady) || c == nil || time.Since(start) > 5*time.Second {
		t.Fatalf("New without a server = %v, %v", c, err)
	}
	if c.Bool("any", "u", nil, true) != true {
		t.Error("a client without flags must serve defaults")
	}
	_ = c.Close(context.Background())
	if _, err := sdkgo.New(context.Background(), "pat_not_an_sdk_key"); err == nil {
		t.Error("New accepted a personal access token")
	}
}
