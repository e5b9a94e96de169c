package app_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/switchyard/switchyard/server/internal/apptest"
)

// exported is one export's answer, its body decoded from gzip when sent so.
type exported struct {
	status int
	header http.Header
	body   []byte // as decoded
	wire   []byte // as sent
}

// export GETs an export route under env with from and to (omitted when
// empty), as bearer, asking for gzip or refusing it.
func export(t *testing.T, s *apptest.Server, bearer, env, kind string, from, to string, gz bool) exported {
	t.Helper()
	q := url.Values{}
	if from != "" {
		q.Set("from", from)
	}
	if to != "" {
		q.Set("to", to)
	}
	// Go's transport decodes gzip by itself only when it asked for it; an
	// explicit Accept-Encoding keeps the body as sent.
	enc := "identity"
	if gz {
		enc = "gzip"
	}
	status, raw, resp := s.Do(t, apptest.Request{Method: "GET", Path: "/api/environments/" + env + "/" + kind + "/export?" + q.Encode(),
		Bearer: bearer, Header: map[string]string{"Accept-Encoding": enc}})
	out := exported{status: status, header: resp.Header, body: raw, wire: raw}
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("gzip body: %v", err)
		}
		if out.body, err = io.ReadAll(zr); err != nil {
			t.Fatalf("gzip body: %v", err)
		}
	}
	return out
}

// lines decodes an NDJSON body, one object per line, each line ended.
func lines(t *testing.T, body []byte) []map[string]any {
	t.Helper()
	out := []map[string]any{}
	if len(body) == 0 {
		return out
	}
	if body[len(body)-1] != '\n' {
		t.Fatalf("NDJSON body does not end with a newline: %q", body)
	}
	for _, l := range bytes.Split(bytes.TrimSuffix(body, []byte("\n")), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("line %s: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

func field2[T any](t *testing.T, rows []map[string]any, name string) []T {
	t.Helper()
	out := []T{}
	for _, r := range rows {
		v, ok := r[name].(T)
		if !ok {
			t.Fatalf("%s of %v is %T", name, r, r[name])
		}
		out = append(out, v)
	}
	return out
}

const ms = time.Millisecond

// docs/reference/measurement.md, Raw export: every impression of the
// environment evaluated in [from, to), at millisecond edges and below, in id
// order (not time order), each line the list's item; the same bytes plain and
// gzip-encoded; nothing of another environment; an empty range is an empty
// 200.
func TestExportImpressions(t *testing.T) {
	t.Parallel()
	me := newMeasEnv(t)
	from := t0.Add(-time.Hour + 123*ms) // 11:00:00.123
	to := from.Add(30*time.Minute + 333*ms)
	at := func(d time.Duration) string { return from.Add(d).Format(time.RFC3339Nano) }
	row := func(value, when string, extra map[string]any) map[string]any {
		m := map[string]any{"flag_key": "checkout", "value": value, "user_id": "u-" + value, "evaluated_at": when}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	toAt := func(d time.Duration) string { return to.Add(d).Format(time.RFC3339Nano) }
	me.mustPost(t, "/impressions", []any{
		row("before-from", at(-ms), nil),
		row("at-from", at(0), map[string]any{"context": map[string]any{"plan": "pro", "seats": 3, "beta": true, "tags": []any{"a", "b"}}}),
		row("before-to", toAt(-ms), map[string]any{"user_id": nil}),
		row("at-to", toAt(0), nil),
		row("just-after-from", at(time.Microsecond), map[string]any{"context": nil}),
		row("just-before-to", toAt(-time.Microsecond), nil),
		row("after-to", toAt(ms), nil),
	})
	// Later ids, earlier times: the export is in id order.
	me.mustPost(t, "/impressions", []any{
		row("a-minute-in", at(time.Minute), nil),
		row("a-day-before", at(-24*time.Hour), nil),
		row(`quote " <b>&amp;</b> é 😀`+"\u2028", at(2*time.Minute), map[string]any{
			"user_id": `user "x" <y>`, "context": map[string]any{"html": "<i>&</i>", "nested": map[string]any{"n": nil, "f": 0.25}}}),
	})
	staging := "/api/environments/" + me.envs["staging"] + "/impressions"
	if status, body := me.call(t, "POST", staging, []any{row("staging-at-from", at(0), nil), row("staging-inside", at(time.Minute), nil)}); status != 204 {
		t.Fatalf("staging ingest = %d %v", status, body)
	}

	rfc := func(t time.Time) string { return t.Format(time.RFC3339Nano) }
	plain := export(t, me.s, me.token, me.envs["production"], "impressions", rfc(from), rfc(to), false)
	if plain.status != 200 {
		t.Fatalf("export = %d %s", plain.status, plain.body)
	}
	if ct, vary, ce := plain.header.Get("Content-Type"), plain.header.Get("Vary"), plain.header.Get("Content-Encoding"); ct != "application/x-ndjson" || vary != "Accept-Encoding" || ce != "" {
		t.Errorf("headers: Content-Type %q, Vary %q, Content-Encoding %q", ct, vary, ce)
	}
	got := lines(t, plain.body)
	want := []string{"at-from", "before-to", "just-after-from", "just-before-to", "a-minute-in", `quote " <b>&amp;</b> é 😀` + "\u2028"}
	if d := cmp.Diff(want, field2[string](t, got, "value")); d != "" {
		t.Errorf("exported values, in id order (-want +got):\n%s", d)
	}
	ids := field2[float64](t, got, "id")
	if !slices.IsSorted(ids) || len(slices.Compact(slices.Clone(ids))) != len(ids) {
		t.Errorf("ids not strictly increasing: %v", ids)
	}

	// Each line is the list's item for the same id, member for member.
	status, raw := me.call(t, "GET", me.path("/impressions?flag_key=checkout&limit=200"), nil)
	if status != 200 {
		t.Fatalf("list = %d", status)
	}
	listed := map[float64]any{}
	for _, it := range raw.(map[string]any)["items"].([]any) {
		listed[it.(map[string]any)["id"].(float64)] = it
	}
	for _, line := range got {
		if d := cmp.Diff(listed[line["id"].(float64)], any(line)); d != "" {
			t.Errorf("export line differs from the list's item (-list +export):\n%s", d)
		}
	}

	gz := export(t, me.s, me.token, me.envs["production"], "impressions", rfc(from), rfc(to), true)
	if gz.status != 200 || gz.header.Get("Content-Encoding") != "gzip" || gz.header.Get("Vary") != "Accept-Encoding" {
		t.Fatalf("gzip export = %d, headers %v", gz.status, gz.header)
	}
	if !bytes.Equal(gz.body, plain.body) || len(gz.wire) >= len(plain.wire) {
		t.Errorf("gzip body (%d bytes sent) decodes to %d bytes, want the plain body's %d", len(gz.wire), len(gz.body), len(plain.body))
	}

	// A server SDK key of the environment exports the same.
	prod, _ := uuid.Parse(me.envs["production"])
	if byKey := export(t, me.s, me.s.SDKKey(t, prod), me.envs["production"], "impressions", rfc(from), rfc(to), false); byKey.status != 200 || !bytes.Equal(byKey.body, plain.body) {
		t.Errorf("export with the SDK key = %d, %d bytes; want the admin's %d", byKey.status, len(byKey.body), len(plain.body))
	}

	// Staging's own export has only its rows.
	st := export(t, me.s, me.token, me.envs["staging"], "impressions", rfc(from), rfc(to), false)
	if d := cmp.Diff([]string{"staging-at-from", "staging-inside"}, field2[string](t, lines(t, st.body), "value")); d != "" {
		t.Errorf("staging export (-want +got):\n%s", d)
	}

	// Empty ranges: nothing at all in them, and rows only of another environment.
	for _, gzip := range []bool{false, true} {
		for _, rng := range [][2]time.Time{{from.Add(-72 * time.Hour), from.Add(-48 * time.Hour)}, {to.Add(time.Hour), to.Add(2 * time.Hour)}} {
			e := export(t, me.s, me.token, me.envs["production"], "impressions", rfc(rng[0]), rfc(rng[1]), gzip)
			if e.status != 200 || len(e.body) != 0 || e.header.Get("Content-Type") != "application/x-ndjson" {
				t.Errorf("empty range (gzip %v) = %d %q %v, want 200 and an empty body", gzip, e.status, e.body, e.header)
			}
		}
	}
	dev := export(t, me.s, me.token, me.envs["development"], "impressions", rfc(from), rfc(to), false)
	if dev.status != 200 || len(dev.body) != 0 {
		t.Errorf("environment without rows = %d %q", dev.status, dev.body)
	}
}

// Times are compared at the microsecond, the stored precision: a bound with a
// finer fraction is neither truncated into an earlier row nor past a later
// one, and an offset other than Z means the same instant.
func TestExportRangeBelowTheMillisecond(t *testing.T) {
	t.Parallel()
	me := newMeasEnv(t)
	base := t0.Add(-time.Hour)
	me.mustPost(t, "/impressions", []any{
		imp("f", "u", "at-1us", base.Add(time.Microsecond)),
		imp("f", "u", "at-2us", base.Add(2*time.Microsecond)),
	})
	for _, tt := range []struct {
		name, from, to string
		want           []string
	}{
		{"from between them", "2026-03-10T11:00:00.0000015Z", "2026-03-10T11:00:01Z", []string{"at-2us"}},
		{"to between them", "2026-03-10T11:00:00Z", "2026-03-10T11:00:00.0000015Z", []string{"at-1us"}},
		{"to at the second", "2026-03-10T11:00:00Z", "2026-03-10T11:00:00.000002Z", []string{"at-1us"}},
		{"offset", "2026-03-10T12:00:00.000001+01:00", "2026-03-10T12:00:00.000002+01:00", []string{"at-1us"}},
	} {
		e := export(t, me.s, me.token, me.envs["production"], "impressions", tt.from, tt.to, false)
		if e.status != 200 {
			t.Fatalf("%s: %d %s", tt.name, e.status, e.body)
		}
		if d := cmp.Diff(tt.want, field2[string](t, lines(t, e.body), "value")); d != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, d)
		}
	}
}

// Goal events export like impressions, by occurred_at, each line the
// document's GoalEvent.
func TestExportEvents(t *testing.T) {
	t.Parallel()
	me := newMeasEnv(t)
	from := t0.Add(-2*time.Hour + 5*ms)
	to := from.Add(time.Hour)
	ev := func(key, user string, at time.Time, value any, ctx any) map[string]any {
		m := goal(key, user, at)
		m["value"], m["context"] = value, ctx
		return m
	}
	me.mustPost(t, "/events", []any{
		ev("before", "u1", from.Add(-ms), 1, nil),
		ev("at-from", "u1", from, 19.99, map[string]any{"cart": []any{"a", "b"}, "coupon": nil}),
		ev("inside", "", from.Add(time.Minute), nil, nil),
		ev("before-to", "u2", to.Add(-ms), 0, map[string]any{}),
		ev("at-to", "u2", to, 2, nil),
	})
	if status, body := me.call(t, "POST", "/api/environments/"+me.envs["staging"]+"/events", []any{ev("staging", "u1", from, 1, nil)}); status != 204 {
		t.Fatalf("staging ingest = %d %v", status, body)
	}
	for _, gz := range []bool{false, true} {
		e := export(t, me.s, me.token, me.envs["production"], "events", from.Format(time.RFC3339Nano), to.Format(time.RFC3339Nano), gz)
		if e.status != 200 {
			t.Fatalf("export = %d %s", e.status, e.body)
		}
		got := lines(t, e.body)
		ids := field2[float64](t, got, "id")
		if !slices.IsSorted(ids) {
			t.Errorf("ids not in order: %v", ids)
		}
		for _, l := range got {
			delete(l, "id")
			at, err := time.Parse(time.RFC3339Nano, l["occurred_at"].(string))
			if err != nil {
				t.Fatal(err)
			}
			l["occurred_at"] = at
		}
		want := []map[string]any{
			{"event_key": "at-from", "user_id": "u1", "value": 19.99, "context": map[string]any{"cart": []any{"a", "b"}, "coupon": nil}, "occurred_at": from},
			{"event_key": "inside", "user_id": nil, "value": nil, "context": nil, "occurred_at": from.Add(time.Minute)},
			{"event_key": "before-to", "user_id": "u2", "value": 0.0, "context": map[string]any{}, "occurred_at": to.Add(-ms)},
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("gzip %v: events (-want +got):\n%s", gz, d)
		}
		if gz != (e.header.Get("Content-Encoding") == "gzip") {
			t.Errorf("gzip %v: Content-Encoding %q", gz, e.header.Get("Content-Encoding"))
		}
	}
}

// Who may export, and which ranges are refused: editors and up (read_only
// tokens too) and the environment's server key; viewers and client keys
// 403; another project 404; no credential 401; missing, malformed or empty
// ranges 422 naming the parameter.
func TestExportRefusals(t *testing.T) {
	t.Parallel()
	me := newMeasEnv(t)
	s := me.s
	project, envs := s.DefaultProject(t)
	prod := me.envs["production"]
	viewerID, viewer := s.User(t, "viewer@example.com", "viewer")
	s.Member(t, project, viewerID, "viewer")
	editorID, editor := s.User(t, "editor@example.com", "viewer")
	s.Member(t, project, editorID, "editor")
	readOnly := s.Token(t, editorID, "read_only", nil)
	other := newProject(t, s, me.token)
	outsiderID, outsider := s.User(t, "outsider@example.com", "viewer")
	s.Member(t, other.ID, outsiderID, "editor")
	client := newKindKey(t, s, me.token, project, envs["production"], "client").Key
	stagingKey := s.SDKKey(t, envs["staging"])
	from, to := "2026-03-10T00:00:00Z", "2026-03-11T00:00:00Z"

	for _, tt := range []struct {
		name, bearer, env, from, to string
		want                        int
		field                       string // named in details, for 422
	}{
		{"editor", editor, prod, from, to, 200, ""},
		{"editor's read_only token", readOnly, prod, from, to, 200, ""},
		{"workspace admin", me.token, prod, from, to, 200, ""},
		{"viewer", viewer, prod, from, to, 403, ""},
		{"client key", client, prod, from, to, 403, ""},
		{"editor of another project", outsider, prod, from, to, 404, ""},
		{"server key of another environment", stagingKey, prod, from, to, 404, ""},
		{"unknown environment", me.token, uuid.NewString(), from, to, 404, ""},
		{"no credential", "", prod, from, to, 401, ""},
		{"from equals to", editor, prod, from, from, 422, "to"},
		{"from after to", editor, prod, to, from, 422, "to"},
		{"missing from", editor, prod, "", to, 422, "from"},
		{"missing to", editor, prod, from, "", 422, "to"},
		{"not a time", editor, prod, "yesterday", to, 422, "from"},
		{"a date only", editor, prod, from, "2026-03-11", 422, "to"},
		{"no such day", editor, prod, "2026-02-30T00:00:00Z", to, 422, "from"},
		{"offset sent with a raw +, which is a space", editor, prod, "2026-03-10T00:00:00 01:00", to, 422, "from"},
		{"offset", editor, prod, "2026-03-10T00:00:00+01:00", to, 200, ""},
	} {
		for _, kind := range []string{"impressions", "events"} {
			e := export(t, s, tt.bearer, tt.env, kind, tt.from, tt.to, false)
			if e.status != tt.want {
				t.Errorf("%s, %s: %d %s, want %d", tt.name, kind, e.status, e.body, tt.want)
				continue
			}
			if tt.want == 200 {
				continue
			}
			if ct := e.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("%s, %s: error Content-Type %q", tt.name, kind, ct)
			}
			var body errorBody
			if err := json.Unmarshal(e.body, &body); err != nil || body.Error == "" {
				t.Errorf("%s, %s: error body %s", tt.name, kind, e.body)
			}
			if tt.field != "" && !slices.ContainsFunc(body.Details, func(d struct {
				Field   string `json:"field"`
				Message string `json:"message"`
			}) bool {
				return d.Field == tt.field
			}) {
				t.Errorf("%s, %s: details %+v do not name %s", tt.name, kind, body.Details, tt.field)
			}
		}
	}
	if status, _, _ := s.Do(t, apptest.Request{Method: "POST", Path: "/api/environments/" + prod + "/impressions/export", Bearer: me.token, Body: []any{}}); status != 405 {
		t.Errorf("POST to the export = %d, want 405", status)
	}
}

// An export larger than a batch comes whole and in order, walking past the
// rows of another environment and of other times interleaved with its own;
// a client that leaves early ends it.
func TestExportAcrossBatches(t *testing.T) {
	t.Parallel()
	me := newMeasEnv(t)
	ctx := context.Background()
	pool := me.s.DB(t)
	// 24,000 rows over 24 seconds: production (2 in 3) and staging (1 in 3),
	// and one in 10 a day earlier, outside every range below. Written directly: the export reads raw
	// rows only.
	if _, err := pool.Exec(ctx, `
		INSERT INTO impressions (environment_id, flag_key, user_id, value, context, evaluated_at)
		SELECT CASE WHEN g % 3 = 0 THEN $2::uuid ELSE $1::uuid END, 'bulk', 'u' || g, g::text,
		       CASE WHEN g % 2 = 0 THEN jsonb_build_object('g', g) END,
		       CASE WHEN g % 10 = 5 THEN $3::timestamptz - interval '1 day' ELSE $3::timestamptz + g * interval '1 ms' END
		FROM generate_series(1, 24000) g`, me.envs["production"], me.envs["staging"], t0.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	count := func(from, to time.Time) int {
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM impressions WHERE environment_id = $1 AND evaluated_at >= $2 AND evaluated_at < $3`,
			me.envs["production"], from, to).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	want := count(t0.Add(-time.Hour), t0)
	from, to := t0.Add(-time.Hour).Format(time.RFC3339), t0.Format(time.RFC3339)
	// The table's whole time (the walk covers every id) and 10 of its 24
	// seconds (bounded exactly first): both more than one batch.
	for _, rng := range []struct {
		from, to time.Time
		min      int
	}{{t0.Add(-time.Hour), t0, 14_000}, {t0.Add(-time.Hour + 5*time.Second), t0.Add(-time.Hour + 15*time.Second), 5_500}} {
		n := count(rng.from, rng.to)
		for _, gz := range []bool{false, true} {
			e := export(t, me.s, me.token, me.envs["production"], "impressions", rng.from.Format(time.RFC3339), rng.to.Format(time.RFC3339), gz)
			got := lines(t, e.body)
			if e.status != 200 || len(got) != n || n < rng.min {
				t.Fatalf("%s to %s, gzip %v: %d, %d rows; want 200 and %d rows", rng.from, rng.to, gz, e.status, len(got), n)
			}
			ids := field2[float64](t, got, "id")
			if !slices.IsSorted(ids) || len(slices.Compact(slices.Clone(ids))) != len(ids) {
				t.Errorf("gzip %v: ids not strictly increasing", gz)
			}
		}
	}

	// A client that reads one line and leaves: the server stops, and goes on
	// serving.
	q := url.Values{"from": {from}, "to": {to}}
	req, _ := http.NewRequest("GET", me.s.URL+"/api/environments/"+me.envs["production"]+"/impressions/export?"+q.Encode(), nil)
	req.Header.Set("Authorization", "Bearer "+me.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	first := make([]byte, 64)
	if _, err := io.ReadFull(resp.Body, first); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if e := export(t, me.s, me.token, me.envs["production"], "impressions", from, to, false); e.status != 200 || len(lines(t, e.body)) != want {
		t.Errorf("export after a client left = %d", e.status)
	}
	if logs := me.s.Logs(); strings.Contains(logs, "export cut off") {
		t.Errorf("a client that left was logged as a failure:\n%s", logs)
	}
}
