package app_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/switchyard/switchyard/server/app"
	"github.com/switchyard/switchyard/server/internal/apptest"
)

// fastWorkers makes the governance workers poll often and retry after a
// few milliseconds instead of 1 s, 5 s and 15 s.
func fastWorkers(extra ...app.Option) []app.Option {
	return append([]app.Option{
		app.WithWorkerInterval(10 * time.Millisecond),
		app.WithNotifyBackoff(10*time.Millisecond, 20*time.Millisecond, 30*time.Millisecond),
	}, extra...)
}

// newGovEnv is newFlagEnv with fast governance workers and more options.
func newGovEnv(t *testing.T, opts ...app.Option) *flagEnv {
	t.Helper()
	s := apptest.Start(t, nil, fastWorkers(opts...)...)
	_, token := s.User(t, "admin@example.com", "admin")
	project, envs := s.DefaultProject(t)
	fe := &flagEnv{s: s, token: token, project: project.String(), envs: map[string]string{}}
	for slug, id := range envs {
		fe.envs[slug] = id.String()
	}
	return fe
}

func (fe *flagEnv) env(slug string) string { return "/api/environments/" + fe.envs[slug] }

// received is one request a receiver got.
type received struct {
	header http.Header
	body   []byte
	at     time.Time
}

// receiver is a real local HTTP endpoint standing in for a webhook
// consumer or a chat provider. status picks the answer to the nth request
// (1-based); 200 when nil.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	reqs   []received
	status func(n int) int
}

func newReceiver(t *testing.T, status func(n int) int) *receiver {
	t.Helper()
	r := &receiver{status: status}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.reqs = append(r.reqs, received{header: req.Header.Clone(), body: body, at: time.Now()})
		n := len(r.reqs)
		r.mu.Unlock()
		code := 200
		if r.status != nil {
			code = r.status(n)
		}
		w.WriteHeader(code)
		_, _ = io.WriteString(w, "ok from receiver")
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.reqs...)
}

// waitFor polls cond until it holds or 10 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// requireApproval turns the approval requirement of an environment on or off.
func (fe *flagEnv) requireApproval(t *testing.T, slug string, on bool) {
	t.Helper()
	if _, err := fe.s.DB(t).Exec(context.Background(), `UPDATE environments SET require_approval = $2 WHERE id = $1`, fe.envs[slug], on); err != nil {
		t.Fatal(err)
	}
}

// count runs a count(*) query on the instance's database.
func (fe *flagEnv) count(t *testing.T, query string, args ...any) int {
	t.Helper()
	var n int
	if err := fe.s.DB(t).QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
