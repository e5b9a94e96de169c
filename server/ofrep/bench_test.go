package ofrep

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/sdkgo/eval"
	"github.com/switchyard/switchyard/server/auth"
)

// clientKey authenticates every request as one client key.
type clientKey struct{ env uuid.UUID }

func (k clientKey) Authenticate(context.Context, auth.Credentials) (*auth.Principal, error) {
	return &auth.Principal{Kind: auth.KindSDKKey, Client: true, KeyID: 2, EnvironmentID: k.env}, nil
}

// envKey authenticates every request as one server key of one environment.
type envKey struct{ env uuid.UUID }

func (k envKey) Authenticate(context.Context, auth.Credentials) (*auth.Principal, error) {
	return &auth.Principal{Kind: auth.KindSDKKey, KeyID: 1, EnvironmentID: k.env}, nil
}

// benchHandler serves n client-side rollout flags, as bench/stream -mode
// ofrep creates them, to one server or client key.
func benchHandler(b *testing.B, n int, a Authenticator) *Handler {
	flags := make([]eval.Flag, n)
	for i := range flags {
		pct := (i * 7) % 101
		flags[i] = eval.Flag{Key: fmt.Sprintf("snapshot-flag-%03d", i), IsEnabled: i%3 != 0, RolloutPercentage: &pct,
			FlagType: eval.FlagTypeBoolean, ClientSide: true, Version: 1}
	}
	x := NewExposures(discard{}, ExposuresConfig{Memory: DefaultExposureMemory, QueueSize: 1 << 30})
	h, err := NewHandler(Config{
		Auth: a, Flags: fixed{Environment{Flags: eval.Compile(flags), Tag: `"t"`}},
		Errors:    func(w http.ResponseWriter, _ *http.Request, err error) { http.Error(w, err.Error(), 500) },
		Exposures: x, TokenSecret: "bench secret",
	})
	if err != nil {
		b.Fatal(err)
	}
	return h
}

const benchBody = `{"context":{"targetingKey":"user-42","plan":"pro","country":"DE","beta":true}}`

func benchServe(b *testing.B, h *Handler, path, inm string, want int) {
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(benchBody))
		if inm != "" {
			req.Header.Set("If-None-Match", inm)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != want {
			b.Fatalf("%d %s", rec.Code, rec.Body)
		}
	}
}

// The request paths bench/stream -mode ofrep loads, without the network.
func BenchmarkEvaluateOne(b *testing.B) {
	h := benchHandler(b, 200, envKey{uuid.New()})
	benchServe(b, h, "/ofrep/v1/evaluate/flags/snapshot-flag-007", "", http.StatusOK)
}

// Recording repeat users (bench/stream's recording target) against the
// same evaluation with nothing recorded.
func BenchmarkEvaluateOneRecorded(b *testing.B) {
	h := benchHandler(b, 200, envKey{uuid.New()})
	bodies := make([]string, 2000)
	for i := range bodies {
		bodies[i] = fmt.Sprintf(`{"context":{"targetingKey":"user-%04d","plan":"pro","country":"DE","beta":true}}`, i)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/ofrep/v1/evaluate/flags/snapshot-flag-007", strings.NewReader(bodies[i%len(bodies)]))
		i++
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("%d %s", rec.Code, rec.Body)
		}
	}
}

func BenchmarkEvaluateOneAnonymous(b *testing.B) {
	h := benchHandler(b, 200, envKey{uuid.New()})
	body := `{"context":{"targetingKey":"","plan":"pro","country":"DE","beta":true}}`
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/ofrep/v1/evaluate/flags/snapshot-flag-007", strings.NewReader(body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("%d %s", rec.Code, rec.Body)
		}
	}
}

func BenchmarkEvaluateAll200(b *testing.B) {
	h := benchHandler(b, 200, clientKey{uuid.New()})
	benchServe(b, h, "/ofrep/v1/evaluate/flags", "", http.StatusOK)
}

func BenchmarkEvaluateAllNotModified(b *testing.B) {
	h := benchHandler(b, 200, clientKey{uuid.New()})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/ofrep/v1/evaluate/flags", strings.NewReader(benchBody)))
	benchServe(b, h, "/ofrep/v1/evaluate/flags", rec.Header().Get("ETag"), http.StatusNotModified)
}
