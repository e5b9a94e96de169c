package app_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard/switchyard/server/app"
	"github.com/switchyard/switchyard/server/internal/apptest"
)

// crashRetryTarget is how soon a delivery cut short by a crash must be
// attempted again once an instance is up: a crash loses no notification
// (docs/reference/notifications.md, Delivery guarantees).
const crashRetryTarget = 30 * time.Second

// attempt is one request a holdingReceiver got.
type attempt struct {
	delivery string
	event    string
	arrived  time.Time
	ended    time.Time // when the receiver answered, or saw the sender go away
	answered bool      // false: the connection went away while it was held
}

// holdingReceiver is a real loopback webhook receiver that holds the nth
// request open for hold(n) before answering 200, or until the sender goes
// away (a killed process closes its connections).
type holdingReceiver struct {
	*httptest.Server
	hold func(n int) time.Duration
	mu   sync.Mutex
	reqs []*attempt
}

func newHoldingReceiver(t *testing.T, hold func(n int) time.Duration) *holdingReceiver {
	t.Helper()
	r := &holdingReceiver{hold: hold}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		a := &attempt{delivery: req.Header.Get("X-Service-Delivery"), event: req.Header.Get("X-Service-Event"), arrived: time.Now()}
		r.mu.Lock()
		r.reqs = append(r.reqs, a)
		n := len(r.reqs)
		r.mu.Unlock()
		timer := time.NewTimer(r.hold(n))
		defer timer.Stop()
		select {
		case <-timer.C:
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, "ok")
			r.mu.Lock()
			a.ended, a.answered = time.Now(), true
			r.mu.Unlock()
		case <-req.Context().Done():
			r.mu.Lock()
			a.ended = time.Now()
			r.mu.Unlock()
		}
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *holdingReceiver) attempts() []attempt {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]attempt, len(r.reqs))
	for i, a := range r.reqs {
		out[i] = *a
	}
	return out
}

// waitUntil polls cond until it holds or the deadline passes.
func waitUntil(t *testing.T, deadline time.Time, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// buildServer builds the real switchyard binary into t's temporary
// directory (removed once t and its subtests end).
func buildServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "switchyard")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = filepath.Join("..", "..") // the repository root, from server/app
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// serverProcess is a switchyard server running as a child process.
type serverProcess struct {
	cmd  *exec.Cmd
	url  string
	mu   sync.Mutex
	logs strings.Builder
	done chan struct{} // closed when the process has exited
}

// startProcess starts the binary on dbURL with the real defaults (the
// in-process bus, loopback on a random port), and env's VAR=value
// settings over them, and waits until it is healthy.
func startProcess(t *testing.T, bin, dbURL string, env ...string) *serverProcess {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"DATABASE_URL=" + dbURL,
		"HOST=127.0.0.1", "PORT=0", "REDIS_URL=",
		"COOKIE_SECURE=false", "RUST_LOG=debug", "PUBLIC_DIR=" + t.TempDir(),
	}
	cmd.Env = append(cmd.Env, env...) // the last of a duplicate wins
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatalf("start server: %v", err)
	}
	p := &serverProcess{cmd: cmd, done: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.logs.WriteString(line + "\n")
			p.mu.Unlock()
			var entry struct{ Msg, Addr string }
			if json.Unmarshal([]byte(line), &entry) == nil && entry.Msg == "listening" {
				select {
				case addr <- entry.Addr:
				default:
				}
			}
		}
		_ = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill(t)
		if t.Failed() {
			p.mu.Lock()
			t.Logf("server process logs:\n%s", p.logs.String())
			p.mu.Unlock()
		}
	})
	select {
	case a := <-addr:
		p.url = "http://" + a
	case <-p.done:
		t.Fatal("server process exited before listening")
	case <-time.After(60 * time.Second):
		t.Fatal("server process did not listen within 60 s")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(p.url + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("server process at %s not healthy: %v", p.url, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill sends SIGKILL (kill -9: no shutdown code runs) and waits for the exit.
func (p *serverProcess) kill(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Kill()
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Error("server process did not exit after SIGKILL")
	}
}

// crashArrangement is a database with a webhook to a holding receiver and one
// notification in the outbox, arranged through an instance that delivers
// nothing (it stays up: a second instance on the same database).
func crashArrangement(t *testing.T, hold func(n int) time.Duration, flags ...string) (*flagEnv, *holdingReceiver) {
	t.Helper()
	ctl := apptest.Start(t, nil, app.WithoutDelivery(), app.WithoutScheduler())
	_, token := ctl.User(t, "admin@example.com", "admin")
	_, envs := ctl.DefaultProject(t)
	fe := &flagEnv{s: ctl, token: token, envs: map[string]string{"production": envs["production"].String()}}
	rcv := newHoldingReceiver(t, hold)
	if status, body := fe.call(t, "POST", fe.env("production")+"/webhooks", map[string]any{"name": "deploy", "url": rcv.URL}); status != 200 {
		t.Fatalf("create webhook = %d %v", status, body)
	}
	for _, key := range flags {
		if status, body := fe.call(t, "POST", fe.flags("production"), map[string]any{"key": key, "is_enabled": true}); status != 200 {
			t.Fatalf("create flag = %d %v", status, body)
		}
	}
	return fe, rcv
}

// TestDeliveryCutShortByKillIsRetriedPromptly kills -9 a real server process
// while a receiver holds its webhook request open, and checks that the
// delivery is attempted again within 30 s by a restarted process, or by an
// instance that was up all along, with the real default lease and poll
// interval; and that it then succeeds once, under the same delivery id.
func TestDeliveryCutShortByKillIsRetriedPromptly(t *testing.T) {
	t.Parallel()
	bin := buildServer(t)
	for _, tc := range []struct {
		name string
		// takeOver starts what delivers after the kill and returns when it
		// counts as up.
		takeOver func(t *testing.T, dbURL string) time.Time
		// before: takeOver runs before the kill, once the killed process
		// has claimed the notification (the first attempt has arrived).
		before bool
	}{
		{name: "restarted process", takeOver: func(t *testing.T, dbURL string) time.Time {
			up := time.Now() // from the start of the process: startup counts against the target
			startProcess(t, bin, dbURL)
			return up
		}},
		{name: "instance up all along", before: true, takeOver: func(t *testing.T, dbURL string) time.Time {
			apptest.Start(t, map[string]string{"DATABASE_URL": dbURL}) // real default lease and poll interval
			return time.Time{}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// The first request is held until its sender dies; later ones are answered at once.
			fe, rcv := crashArrangement(t, func(n int) time.Duration {
				if n == 1 {
					return time.Hour
				}
				return 0
			}, "deploy-trigger")
			first := startProcess(t, bin, fe.s.DBURL)
			waitUntil(t, time.Now().Add(30*time.Second), "the first attempt", func() bool { return len(rcv.attempts()) >= 1 })
			if tc.before {
				tc.takeOver(t, fe.s.DBURL)
			}
			first.kill(t)
			killed := time.Now()
			up := killed // an instance up all along counts from the kill
			if !tc.before {
				up = tc.takeOver(t, fe.s.DBURL)
			}
			waitUntil(t, up.Add(crashRetryTarget), "the delivery to be attempted again within 30 s", func() bool { return len(rcv.attempts()) >= 2 })
			got := rcv.attempts()
			t.Logf("attempted again %v after the kill, %v after an instance was up", got[1].arrived.Sub(killed), got[1].arrived.Sub(up))
			if got[0].answered || got[0].ended.After(killed.Add(time.Second)) || got[1].arrived.Before(killed) {
				t.Errorf("first attempt %v to %v (answered %v), second at %v, kill at %v: want the first cut off by the kill and the second after it",
					got[0].arrived, got[0].ended, got[0].answered, got[1].arrived, killed)
			}
			if got[0].delivery == "" || got[1].delivery != got[0].delivery {
				t.Errorf("X-Service-Delivery %q then %q, want the same id", got[0].delivery, got[1].delivery)
			}
			waitUntil(t, time.Now().Add(10*time.Second), "the outbox to drain", func() bool {
				return fe.count(t, `SELECT count(*) FROM notification_outbox`) == 0
			})
			if n := len(rcv.attempts()); n != 2 {
				t.Errorf("%d attempts, want 2 (the one cut short and one success)", n)
			}
			if n := fe.count(t, `SELECT count(*) FROM webhook_deliveries WHERE status_code = 200`); n != 1 {
				t.Errorf("%d successful deliveries logged, want 1", n)
			}
		})
	}
}

// TestDeliveryInFlightIsNeverSentTwice runs two delivering instances on one
// database while a receiver holds every request open for longer than the
// claim lease, in total or each: the live sender keeps its claims, so no
// notification is attempted twice.
func TestDeliveryInFlightIsNeverSentTwice(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		hold  time.Duration
		flags []string
		opts  []app.Option
	}{
		// A 1.5 s lease, and each request held for 4 s, more than two and a
		// half leases (within the notify client's 5 s timeout).
		{name: "short lease, one request outlasts it", hold: 4 * time.Second, flags: []string{"a", "b"},
			opts: []app.Option{app.WithNotifyLease(1500 * time.Millisecond), app.WithWorkerInterval(10 * time.Millisecond)}},
		// The real defaults: a batch of three held 4 s each, one after
		// another, outlasts the default lease.
		{name: "default lease, a batch outlasts it", hold: 4 * time.Second, flags: []string{"a", "b", "c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fe, rcv := crashArrangement(t, func(int) time.Duration { return tc.hold }, tc.flags...)
			started := time.Now()
			for range 2 {
				apptest.Start(t, map[string]string{"DATABASE_URL": fe.s.DBURL}, tc.opts...)
			}
			waitUntil(t, time.Now().Add(time.Duration(len(tc.flags)+2)*tc.hold+20*time.Second), "the outbox to drain", func() bool {
				return fe.count(t, `SELECT count(*) FROM notification_outbox`) == 0
			})
			seen := map[string]int{}
			for _, a := range rcv.attempts() {
				seen[a.delivery]++
				if !a.answered {
					t.Errorf("delivery %s was cut short", a.delivery)
				}
			}
			if len(seen) != len(tc.flags) {
				t.Errorf("%d distinct deliveries, want %d", len(seen), len(tc.flags))
			}
			for id, n := range seen {
				if n != 1 {
					t.Errorf("delivery %s attempted %d times, want once", id, n)
				}
			}
			t.Logf("%d deliveries in %v", len(rcv.attempts()), time.Since(started))
		})
	}
}

// TestDeliveryCutShortByShutdownIsGivenBack stops an instance gracefully
// while a receiver holds its webhook request open: the send is cut short,
// is not logged as an attempt, and its claim is given back, so an instance
// that is up sends it again at its next poll rather than after the lease.
func TestDeliveryCutShortByShutdownIsGivenBack(t *testing.T) {
	t.Parallel()
	fe, rcv := crashArrangement(t, func(n int) time.Duration {
		if n == 1 {
			return time.Hour
		}
		return 0
	}, "deploy-trigger")
	leaving := apptest.Start(t, map[string]string{"DATABASE_URL": fe.s.DBURL}) // real defaults
	waitUntil(t, time.Now().Add(20*time.Second), "the first attempt", func() bool { return len(rcv.attempts()) >= 1 })
	apptest.Start(t, map[string]string{"DATABASE_URL": fe.s.DBURL})
	leaving.Stop()
	stopped := time.Now()
	// Half the default 10 s lease: only a released claim is sent this soon
	// (the staying instance polls every second).
	waitUntil(t, stopped.Add(5*time.Second), "the delivery to be sent again soon after the stop", func() bool { return len(rcv.attempts()) >= 2 })
	t.Logf("sent again %v after the stop", rcv.attempts()[1].arrived.Sub(stopped))
	waitUntil(t, time.Now().Add(10*time.Second), "the outbox to drain", func() bool {
		return fe.count(t, `SELECT count(*) FROM notification_outbox`) == 0
	})
	got := rcv.attempts()
	if len(got) != 2 || got[0].answered || got[1].delivery != got[0].delivery {
		t.Errorf("attempts = %+v, want the one cut short and one success under the same delivery id", got)
	}
	if n := fe.count(t, `SELECT count(*) FROM webhook_deliveries`); n != 1 {
		t.Errorf("%d deliveries logged, want 1 (a send cut short by shutdown is not an attempt)", n)
	}
}
