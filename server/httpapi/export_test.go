package httpapi

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/gen/apiclient"
	"github.com/switchyard/switchyard/gen/apiserver"
	"github.com/switchyard/switchyard/server/apperr"
)

// tricky are strings that exercise every escape of a JSON string.
var tricky = []string{
	"", "plain", `quote " and backslash \`, "<script>&amp;</script>", "tab\tnew\nline\rreturn\bbell\f",
	"\x00\x01\x1f\x7f", "é ü 東京 😀", "line\u2028para\u2029", "bad \xff\xfe utf-8", "\xe2\x80", strings.Repeat("x", 300),
}

// The export writes each impression as the list writes its items
// (listedImpression through encoding/json): the same JSON value, member for
// member, whatever the strings, context and time.
func TestAppendImpressionMatchesTheList(t *testing.T) {
	t.Parallel()
	berlin := time.FixedZone("CET", 3600)
	contexts := []string{"", "null", `{}`, `{"plan": "pro", "age": 30, "ratio": 0.25, "tags": ["a", "b"], "nested": {"x": null, "y": true}}`,
		`{"html": "<b>&</b>", "quote": "a \"b\" c", "unicode": "é\u2028😀", "escaped": "line\nnext"}`, `{"big": 12345678901234567, "neg": -1.5e-7}`}
	var rows []db.ListImpressionsForExportRow
	for i, s := range tricky {
		user := &tricky[(i+3)%len(tricky)]
		if i%4 == 0 {
			user = nil
		}
		at := time.Date(2026, 3, 10, 12, 0, 0, i*123_456_789%1_000_000_000, time.UTC)
		if i%3 == 0 {
			at = at.In(berlin)
		}
		rows = append(rows, db.ListImpressionsForExportRow{
			ID: int64(i) * 1_000_003, FlagKey: "flag-" + s, UserID: user, Value: s,
			Context: contexts[i%len(contexts)], EvaluatedAt: at,
		})
	}
	for _, r := range rows {
		line := appendImpression(nil, r)
		if !json.Valid(line) || strings.ContainsAny(string(line), "\n\r") {
			t.Fatalf("not one line of JSON: %s", line)
		}
		stored := db.Impression{ID: r.ID, FlagKey: r.FlagKey, UserID: r.UserID, Value: r.Value, EvaluatedAt: r.EvaluatedAt}
		if r.Context != "" && r.Context != "null" {
			stored.Context = json.RawMessage(r.Context)
		}
		item, err := listedImpression(stored)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(item)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(decodeJSON(t, want), decodeJSON(t, line)); d != "" {
			t.Errorf("export line differs from the list item (-list +export):\n%s\nlist:   %s\nexport: %s", d, want, line)
		}
	}
}

// The export writes exactly the members of the generated types: a member
// added to Impression or GoalEvent in api/openapi.yaml fails here until the
// export writes it too.
func TestExportMembersAreTheDocumentsMembers(t *testing.T) {
	t.Parallel()
	user := "u"
	value := 1.5
	for _, tt := range []struct {
		name string
		typ  reflect.Type
		line []byte
	}{
		{"Impression", reflect.TypeFor[apiserver.Impression](), appendImpression(nil, db.ListImpressionsForExportRow{UserID: &user, Context: "{}"})},
		{"GoalEvent", reflect.TypeFor[apiclient.GoalEvent](), appendGoalEvent(nil, db.ListGoalEventsForExportRow{UserID: &user, Value: &value, Context: "{}"})},
	} {
		var want []string
		for f := range tt.typ.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			want = append(want, name)
		}
		var got map[string]json.RawMessage
		if err := json.Unmarshal(tt.line, &got); err != nil {
			t.Fatal(err)
		}
		keys := slices.Sorted(maps.Keys(got))
		slices.Sort(want)
		if d := cmp.Diff(want, keys); d != "" {
			t.Errorf("%s members (-document +export):\n%s", tt.name, d)
		}
	}
}

// Goal events are written as encoding/json writes the generated GoalEvent.
func TestAppendGoalEventMatchesTheDocument(t *testing.T) {
	t.Parallel()
	values := []*float64{nil, new(0.0), new(1.0), new(-2.5), new(0.1), new(1e-7), new(1e21), new(123456789.125), new(math.MaxFloat64), new(-1e-300)}
	for i, v := range values {
		s := tricky[i%len(tricky)]
		user := &tricky[(i+1)%len(tricky)]
		if i%3 == 0 {
			user = nil
		}
		ctx := `{"a": [1, 2, {"b": "c d"}], "e": "f"}`
		r := db.ListGoalEventsForExportRow{ID: int64(i + 1), EventKey: s, UserID: user, Value: v, Context: ctx,
			OccurredAt: time.Date(2026, 3, 10, 12, 0, i, i*1000, time.UTC)}
		var m map[string]any
		if err := json.Unmarshal([]byte(ctx), &m); err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(apiclient.GoalEvent{Id: r.ID, EventKey: r.EventKey, UserId: r.UserID, Value: r.Value, Context: &m, OccurredAt: r.OccurredAt})
		if err != nil {
			t.Fatal(err)
		}
		line := appendGoalEvent(nil, r)
		if d := cmp.Diff(decodeJSON(t, want), decodeJSON(t, line)); d != "" {
			t.Errorf("goal event (-document +export):\n%s\nwant: %s\ngot:  %s", d, want, line)
		}
	}
}

// Numbers come out byte for byte as encoding/json writes them (strings:
// server/internal/jsonappend).
func TestAppendFloatIsEncodingJSONs(t *testing.T) {
	t.Parallel()
	for _, f := range []float64{0, 1, -1, 0.1, 1.5, 1e-6, 9.99e-7, 1e-7, 1e20, 1e21, 1.2345e22, -3.4e-12, 123456789.125, math.MaxFloat64, math.SmallestNonzeroFloat64} {
		want, _ := json.Marshal(f)
		if got := appendFloat(nil, f); string(got) != string(want) {
			t.Errorf("appendFloat(%v) = %s, want %s", f, got, want)
		}
	}
}

// The stored context is written compact, strings untouched.
func TestAppendRawJSON(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                                  "null",
		"null":                              "null",
		`{"a": 1, "b": [1, 2]}`:             `{"a":1,"b":[1,2]}`,
		`{"s p": "x: y, z", "q": "\" , :"}`: `{"s p":"x: y, z","q":"\" , :"}`,
		`{"e": "\\", "f": " "}`:             `{"e":"\\","f":" "}`,
	} {
		if got := string(appendRawJSON(nil, in)); got != want {
			t.Errorf("appendRawJSON(%s) = %s, want %s", in, got, want)
		}
	}
}

func decodeJSON(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return v
}

// fakeExport hands over batches, then err.
type fakeExport struct {
	batches [][]db.ListImpressionsForExportRow
	err     error
}

func (f fakeExport) Each(ctx context.Context, fn func([]db.ListImpressionsForExportRow) error) error {
	for _, b := range f.batches {
		if err := fn(b); err != nil {
			return err
		}
	}
	return f.err
}

// An export that fails before its first row answers the usual JSON error;
// one that fails after it is cut off, so that no client takes it for
// complete: the chunked body ends without its last chunk, and a gzip body
// without its trailer.
func TestServeExportFailures(t *testing.T) {
	t.Parallel()
	h := exportHandler{errs: errorWriter{logger: slog.New(slog.DiscardHandler)}, logger: slog.New(slog.DiscardHandler)}
	row := db.ListImpressionsForExportRow{ID: 1, FlagKey: "f", Value: "v", Context: "null", EvaluatedAt: time.Unix(0, 0).UTC()}
	var exp fakeExport
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		serveExport(h, w, r, rows[db.ListImpressionsForExportRow](exp), appendImpression)
	}))
	t.Cleanup(srv.Close)
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	get := func(t *testing.T, gz bool) (*http.Response, []byte, error) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		if gz {
			req.Header.Set("Accept-Encoding", "gzip")
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body io.Reader = resp.Body
		if resp.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(resp.Body)
			if err != nil {
				return resp, nil, err
			}
			body = zr
		}
		b, err := io.ReadAll(bufio.NewReader(body))
		return resp, b, err
	}

	exp = fakeExport{err: apperr.E(apperr.Unavailable, "database unavailable")}
	resp, body, err := get(t, false)
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("failure before the first row: %d %s %q, %v; want a 503 JSON error", resp.StatusCode, resp.Header.Get("Content-Type"), body, err)
	}

	exp = fakeExport{batches: [][]db.ListImpressionsForExportRow{{row, row}}, err: errors.New("connection reset")}
	for _, gz := range []bool{false, true} {
		resp, body, err := get(t, gz)
		if resp.StatusCode != http.StatusOK || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("gzip %v: failure after the first rows: status %d, read error %v; want 200 and io.ErrUnexpectedEOF", gz, resp.StatusCode, err)
		}
		if want := string(appendImpression(nil, row)) + "\n"; !gz && string(body) != want+want {
			t.Errorf("body before the cut = %q, want the batch handed over", body)
		}
	}

	exp = fakeExport{batches: [][]db.ListImpressionsForExportRow{{row}, {row}}}
	for _, gz := range []bool{false, true} {
		resp, body, err := get(t, gz)
		if err != nil || resp.StatusCode != http.StatusOK || strings.Count(string(body), "\n") != 2 {
			t.Errorf("gzip %v: complete export: %d %q, %v", gz, resp.StatusCode, body, err)
		}
		if got := resp.Header.Get("Content-Encoding") == "gzip"; got != gz {
			t.Errorf("gzip %v: Content-Encoding %q", gz, resp.Header.Get("Content-Encoding"))
		}
		if resp.Header.Get("Content-Type") != "application/x-ndjson" || resp.Header.Get("Vary") != "Accept-Encoding" {
			t.Errorf("headers %v", resp.Header)
		}
	}
}
