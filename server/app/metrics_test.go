package app_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchyard/switchyard/server/app"
	"github.com/switchyard/switchyard/server/config"
	"github.com/switchyard/switchyard/server/internal/apptest"
	"github.com/switchyard/switchyard/server/internal/testenv"
)

// scrape sends GET url with an Authorization header (none when empty) and
// returns the status, the body and the response.
func scrape(t *testing.T, url, authorization string) (int, string, *http.Response) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body), resp
}

// wantMetrics checks a 200 in the Prometheus text format.
func wantMetrics(t *testing.T, what string, status int, body string) {
	t.Helper()
	if status != http.StatusOK || !strings.Contains(body, "switchyard_") {
		t.Errorf("%s = %d %.200q, want 200 with the metrics", what, status, body)
	}
}

// wantJSONError checks an error status with the API's JSON error body.
func wantJSONError(t *testing.T, what string, status int, body string, resp *http.Response, want int) {
	t.Helper()
	var e struct {
		Error string `json:"error"`
	}
	if status != want || json.Unmarshal([]byte(body), &e) != nil || e.Error == "" {
		t.Errorf("%s = %d %.200q, want %d with a JSON error", what, status, body, want)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("%s Content-Type = %q, want application/json", what, ct)
	}
}

// startApp starts an instance as apptest.Start does, but returns the App so
// that a test can learn the address METRICS_ADDR bound, and stop returns
// Serve's error.
func startApp(t *testing.T, env map[string]string) (_ *app.App, base string, stop func() error) {
	t.Helper()
	vars := map[string]string{
		"HOST": "127.0.0.1", "PORT": "0", "REDIS_URL": "", "COOKIE_SECURE": "false", "RUST_LOG": "warn",
		"PUBLIC_DIR": hardeningDashboard(t), "DATABASE_URL": testenv.DatabaseURL(t),
	}
	for k, v := range env {
		vars[k] = v
	}
	cfg, err := config.FromEnv(func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		cancel()
		t.Fatalf("start app: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx) }()
	stopped := false
	stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(15 * time.Second):
			t.Fatal("server did not stop within 15 s")
			return nil
		}
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return a, "http://" + a.Addr(), stop
}

// docs/deployment.md, Monitoring: unset, /metrics is on the main port and
// needs no credential, as it always did.
func TestMetricsUnsetOnMainPort(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	status, body, _ := scrape(t, s.URL+"/metrics", "")
	wantMetrics(t, "GET /metrics", status, body)
}

// METRICS_TOKEN alone: the main port's /metrics requires the bearer token;
// nothing else changes (the API's own credentials do not open it).
func TestMetricsTokenOnMainPort(t *testing.T) {
	t.Parallel()
	const token = "scrape-secret-0123456789"
	s := apptest.Start(t, map[string]string{"METRICS_TOKEN": token})
	_, admin := s.User(t, "admin@example.com", "admin")
	for _, authorization := range []string{"", "Bearer", "Bearer wrong", "Bearer " + token + "x", "Basic " + token, token, "Bearer " + admin} {
		status, body, resp := scrape(t, s.URL+"/metrics", authorization)
		what := "GET /metrics with Authorization " + authorization
		wantJSONError(t, what, status, body, resp, http.StatusUnauthorized)
		if got := resp.Header.Get("WWW-Authenticate"); !strings.HasPrefix(got, "Bearer") {
			t.Errorf("%s WWW-Authenticate = %q, want Bearer", what, got)
		}
	}
	for _, authorization := range []string{"Bearer " + token, "bearer " + token} {
		status, body, _ := scrape(t, s.URL+"/metrics", authorization)
		wantMetrics(t, "GET /metrics with Authorization "+authorization, status, body)
	}
	// The rest of the server is as it was.
	if status, body, _ := scrape(t, s.URL+"/health", ""); status != http.StatusOK || body != "OK" {
		t.Errorf("GET /health = %d %q", status, body)
	}
}

// METRICS_ADDR: /metrics moves to a listener of its own and the main port
// answers 404 there (not the dashboard's page); the metrics listener serves
// nothing else. With METRICS_TOKEN as well, that listener requires it.
func TestMetricsOwnListener(t *testing.T) {
	t.Parallel()
	t.Run("open", func(t *testing.T) {
		t.Parallel()
		a, base, _ := startApp(t, map[string]string{"METRICS_ADDR": "127.0.0.1:0"})
		metricsURL := "http://" + a.MetricsAddr()
		if a.MetricsAddr() == "" || a.MetricsAddr() == strings.TrimPrefix(base, "http://") {
			t.Fatalf("MetricsAddr = %q, main %q", a.MetricsAddr(), base)
		}
		status, body, resp := scrape(t, base+"/metrics", "")
		wantJSONError(t, "main port GET /metrics", status, body, resp, http.StatusNotFound)
		status, body, resp = scrape(t, metricsURL+"/metrics", "")
		wantMetrics(t, "metrics listener GET /metrics", status, body)
		if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("metrics listener X-Content-Type-Options = %q, want nosniff", got)
		}
		for _, path := range []string{"/", "/health", "/api/projects", "/metrics/x"} {
			status, body, resp := scrape(t, metricsURL+path, "")
			wantJSONError(t, "metrics listener GET "+path, status, body, resp, http.StatusNotFound)
		}
		// The main port still serves everything else.
		if status, body, _ := scrape(t, base+"/health", ""); status != http.StatusOK || body != "OK" {
			t.Errorf("GET /health = %d %q", status, body)
		}
		if status, body, _ := scrape(t, base+"/", ""); status != http.StatusOK || !strings.Contains(body, "<title>Switchyard</title>") {
			t.Errorf("GET / = %d %.100q, want the dashboard", status, body)
		}
	})
	t.Run("token", func(t *testing.T) {
		t.Parallel()
		const token = "another-scrape-secret"
		a, base, _ := startApp(t, map[string]string{"METRICS_ADDR": "127.0.0.1:0", "METRICS_TOKEN": token})
		metricsURL := "http://" + a.MetricsAddr() + "/metrics"
		status, body, resp := scrape(t, metricsURL, "")
		wantJSONError(t, "GET /metrics without the token", status, body, resp, http.StatusUnauthorized)
		status, body, resp = scrape(t, metricsURL, "Bearer nope")
		wantJSONError(t, "GET /metrics with a wrong token", status, body, resp, http.StatusUnauthorized)
		status, body, _ = scrape(t, metricsURL, "Bearer "+token)
		wantMetrics(t, "GET /metrics with the token", status, body)
		status, body, resp = scrape(t, base+"/metrics", "Bearer "+token)
		wantJSONError(t, "main port GET /metrics with the token", status, body, resp, http.StatusNotFound)
	})
}

// Shutdown closes the metrics listener with the main one; a busy
// METRICS_ADDR fails the start, naming the variable.
func TestMetricsListenerLifecycle(t *testing.T) {
	t.Parallel()
	a, base, stop := startApp(t, map[string]string{"METRICS_ADDR": "127.0.0.1:0"})
	addr := a.MetricsAddr()
	status, body, _ := scrape(t, "http://"+addr+"/metrics", "")
	wantMetrics(t, "GET /metrics", status, body)
	if err := stop(); err != nil {
		t.Fatalf("serve: %v", err)
	}
	for _, target := range []string{addr, strings.TrimPrefix(base, "http://")} {
		if conn, err := net.DialTimeout("tcp", target, time.Second); err == nil {
			conn.Close()
			t.Errorf("%s still accepts connections after shutdown", target)
		}
	}

	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	vars := map[string]string{"HOST": "127.0.0.1", "PORT": "0", "REDIS_URL": "", "COOKIE_SECURE": "false",
		"DATABASE_URL": testenv.DatabaseURL(t), "METRICS_ADDR": busy.Addr().String()}
	cfg, err := config.FromEnv(func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	if a, err := app.New(context.Background(), cfg, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), "METRICS_ADDR") {
		if a != nil {
			t.Errorf("app.New with a busy METRICS_ADDR succeeded")
		}
		t.Errorf("app.New with a busy METRICS_ADDR = %v, want an error naming METRICS_ADDR", err)
	}
}
