// Package apptest starts real Switchyard instances in-process for tests: each
// on 127.0.0.1 with a random port, against a per-test PostgreSQL database
// (or one the test shares between instances), with logs captured.
package apptest

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/gen/apiclient"
	"github.com/switchyard/switchyard/server/app"
	"github.com/switchyard/switchyard/server/config"
	"github.com/switchyard/switchyard/server/internal/testenv"
)

// Server is one running instance.
type Server struct {
	URL    string // base URL, e.g. http://127.0.0.1:41234
	DBURL  string // the database it uses; pass it as DATABASE_URL to share it
	Client *apiclient.Client
	logs   *syncBuffer
	stop   func()
	dbOnce sync.Once
	db     *pgxpool.Pool
	dbErr  error
}

// Start starts an instance. env overrides the test defaults: a fresh
// database, the in-process bus, loopback on a random port, insecure cookies
// for plain HTTP, debug logs. The instance stops at the end of the test.
func Start(t testing.TB, env map[string]string, opts ...app.Option) *Server {
	t.Helper()
	vars := map[string]string{
		"HOST":          "127.0.0.1",
		"PORT":          "0",
		"REDIS_URL":     "",
		"COOKIE_SECURE": "false",
		"RUST_LOG":      "debug",
		"PUBLIC_DIR":    t.TempDir(),
	}
	for k, v := range env {
		vars[k] = v
	}
	if _, ok := vars["DATABASE_URL"]; !ok {
		vars["DATABASE_URL"] = testenv.DatabaseURL(t)
	}
	cfg, err := config.FromEnv(func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	logs := &syncBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: cfg.LogLevel}))
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, cfg, logger, opts...)
	if err != nil {
		cancel()
		t.Fatalf("start app: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx) }()
	s := &Server{URL: "http://" + a.Addr(), DBURL: cfg.DatabaseURL, logs: logs}
	var once sync.Once
	s.stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("serve: %v", err)
				}
			case <-time.After(15 * time.Second):
				t.Errorf("server did not stop within 15 s")
			}
		})
	}
	t.Cleanup(func() {
		s.stop()
		if s.db != nil {
			s.db.Close()
		}
		if t.Failed() {
			t.Logf("server logs:\n%s", logs.String())
		}
	})
	s.Client, err = apiclient.NewClient(s.URL)
	if err != nil {
		t.Fatalf("api client: %v", err)
	}
	waitHealthy(t, s.URL)
	return s
}

// Stop shuts the instance down gracefully and waits for it; safe to call twice.
func (s *Server) Stop() { s.stop() }

// Logs returns everything the instance has logged so far (JSON lines).
func (s *Server) Logs() string { return s.logs.String() }

// LogLines returns the log lines whose message is msg.
func (s *Server) LogLines(msg string) []string {
	var out []string
	for _, line := range strings.Split(s.logs.String(), "\n") {
		if strings.Contains(line, `"msg":"`+msg+`"`) {
			out = append(out, line)
		}
	}
	return out
}

func waitHealthy(t testing.TB, base string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(base + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			err = errors.New(resp.Status)
		}
		if time.Now().After(deadline) {
			t.Fatalf("server at %s not healthy: %v", base, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// syncBuffer is a bytes.Buffer safe for the logger and the test to share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
