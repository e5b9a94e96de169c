package app_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/switchyard/switchyard/server/app"
	"github.com/switchyard/switchyard/server/internal/apptest"
	"github.com/switchyard/switchyard/server/internal/testenv"
)

// ofrepEnv is a project whose staging environment has one flag of each type,
// a server key and a client key.
type ofrepEnv struct {
	s      *apptest.Server
	admin  string
	env    uuid.UUID
	server string
	client clientKeyBody
}

func newOFREPEnv(t *testing.T, opts ...app.Option) *ofrepEnv {
	t.Helper()
	return newOFREPEnvOn(t, nil, opts...)
}

// newOFREPEnvOn is newOFREPEnv with environment variables for the server.
func newOFREPEnvOn(t *testing.T, vars map[string]string, opts ...app.Option) *ofrepEnv {
	t.Helper()
	s := apptest.Start(t, vars, opts...)
	_, admin := s.User(t, "admin@example.com", "admin")
	p := newProject(t, s, admin)
	env := p.envBySlug(t, "staging")
	oe := &ofrepEnv{s: s, admin: admin, env: env,
		server: newKindKey(t, s, admin, p.ID, env, "server").Key,
		client: newKindKey(t, s, admin, p.ID, env, "client"),
	}
	flags := "/api/environments/" + env.String() + "/flags"
	for _, f := range []map[string]any{
		{"key": "dark-mode", "is_enabled": true, "client_side": true,
			"rules": []map[string]any{{"attribute": "plan", "operator": "equals", "values": []string{"pro"}}}, "rollout_percentage": 0},
		{"key": "greeting", "is_enabled": true, "flag_type": "string", "default_value": "hello", "client_side": true,
			"rules": []map[string]any{{"attribute": "country", "operator": "equals", "values": []string{"DE"}, "variant": "hallo"}}},
		{"key": "limit", "is_enabled": true, "flag_type": "integer", "default_value": 10, "client_side": true},
		{"key": "layout", "is_enabled": true, "flag_type": "json", "default_value": map[string]any{"cols": 3}, "client_side": true},
		{"key": "nothing", "is_enabled": true, "flag_type": "string", "client_side": true},
		{"key": "secret-launch", "is_enabled": true},
	} {
		must(t, s, admin, "POST", flags, f, http.StatusOK, nil)
	}
	return oe
}

func (oe *ofrepEnv) eval(t *testing.T, key, flag string, body any) (int, map[string]any, *http.Response) {
	t.Helper()
	path := "/ofrep/v1/evaluate/flags"
	if flag != "" {
		path += "/" + flag
	}
	status, raw, resp := oe.s.Do(t, apptest.Request{Method: "POST", Path: path, Bearer: key, Body: body})
	var out map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("POST %s = %d %s: %v", path, status, raw, err)
		}
	}
	return status, out, resp
}

func ctxOf(user string, attrs map[string]any) map[string]any {
	c := map[string]any{"targetingKey": user}
	for k, v := range attrs {
		c[k] = v
	}
	return map[string]any{"context": c}
}

// docs/reference/ofrep.md, Result of one flag: single evaluations of every
// type, targeting, reasons, the null result, a missing flag, bad bodies,
// credentials.
func TestOFREPSingleEvaluation(t *testing.T) {
	t.Parallel()
	oe := newOFREPEnv(t)
	cases := []struct {
		name, flag string
		body       any
		want       map[string]any
	}{
		{"boolean, rule match", "dark-mode", ctxOf("u1", map[string]any{"plan": "pro"}),
			map[string]any{"key": "dark-mode", "value": true, "reason": "TARGETING_MATCH", "variant": "true", "metadata": map[string]any{"version": 1.0}}},
		{"boolean, outside the rollout", "dark-mode", ctxOf("u1", map[string]any{"plan": "free"}),
			map[string]any{"key": "dark-mode", "value": false, "reason": "SPLIT", "variant": "false", "metadata": map[string]any{"version": 1.0}}},
		{"string variant", "greeting", ctxOf("u2", map[string]any{"country": "DE"}),
			map[string]any{"key": "greeting", "value": "hallo", "reason": "TARGETING_MATCH", "variant": "hallo", "metadata": map[string]any{"version": 1.0}}},
		{"string default, anonymous", "greeting", map[string]any{},
			map[string]any{"key": "greeting", "value": "hello", "reason": "DEFAULT", "variant": "hello", "metadata": map[string]any{"version": 1.0}}},
		{"integer", "limit", nil,
			map[string]any{"key": "limit", "value": 10.0, "reason": "DEFAULT", "variant": "10", "metadata": map[string]any{"version": 1.0}}},
		{"json", "layout", ctxOf("u3", nil),
			map[string]any{"key": "layout", "value": map[string]any{"cols": 3.0}, "reason": "DEFAULT", "variant": `{"cols":3}`, "metadata": map[string]any{"version": 1.0}}},
		{"null result: no value, no variant", "nothing", ctxOf("u3", nil),
			map[string]any{"key": "nothing", "reason": "DEFAULT", "metadata": map[string]any{"version": 1.0}}},
		{"non-scalar context entries are ignored", "dark-mode", ctxOf("u1", map[string]any{"plan": []string{"pro"}}),
			map[string]any{"key": "dark-mode", "value": false, "reason": "SPLIT", "variant": "false", "metadata": map[string]any{"version": 1.0}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, got, _ := oe.eval(t, oe.client.Key, c.flag, c.body)
			if status != http.StatusOK {
				t.Fatalf("status %d %v", status, got)
			}
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("result (-want +got):\n%s", d)
			}
		})
	}

	notFound := func(flag string) map[string]any {
		return map[string]any{"key": flag, "errorCode": "FLAG_NOT_FOUND", "errorDetails": "flag " + flag + " not found"}
	}
	// A hidden flag is exactly a missing one for a client key; a server key sees it.
	for _, flag := range []string{"no-such-flag", "secret-launch"} {
		status, got, _ := oe.eval(t, oe.client.Key, flag, ctxOf("u", nil))
		if status != http.StatusNotFound || cmp.Diff(notFound(flag), got) != "" {
			t.Errorf("%s with a client key = %d %v, want 404 FLAG_NOT_FOUND", flag, status, got)
		}
	}
	if status, got, _ := oe.eval(t, oe.server, "secret-launch", ctxOf("u", nil)); status != http.StatusOK || got["value"] != true {
		t.Errorf("secret-launch with a server key = %d %v", status, got)
	}
	for name, body := range map[string]any{"an array body": "[1]", "a string context": `{"context": "x"}`, "broken JSON": `{"context": {`} {
		status, got, _ := oe.eval(t, oe.client.Key, "dark-mode", body)
		if status != http.StatusBadRequest || got["errorCode"] != "INVALID_CONTEXT" || got["key"] != "dark-mode" {
			t.Errorf("%s = %d %v, want 400 INVALID_CONTEXT", name, status, got)
		}
	}
	// X-API-Key works like the bearer header; sessions and tokens do not.
	status, raw, _ := oe.s.Do(t, apptest.Request{Method: "POST", Path: "/ofrep/v1/evaluate/flags/limit", Header: map[string]string{"X-API-Key": oe.client.Key}, Body: map[string]any{}})
	if status != http.StatusOK {
		t.Errorf("X-API-Key = %d %s", status, raw)
	}
	for name, cred := range map[string]string{"none": "", "a personal access token": oe.admin, "a bad key": "pk_live_nope"} {
		want := http.StatusUnauthorized
		if strings.HasPrefix(cred, "pat_") {
			want = http.StatusForbidden
		}
		if status, _, _ := oe.eval(t, cred, "limit", nil); status != want {
			t.Errorf("%s = %d, want %d", name, status, want)
		}
	}
	r := login(t, oe.s, "admin@example.com", "password123")
	if status, _, _ := oe.s.Do(t, apptest.Request{Method: "POST", Path: "/ofrep/v1/evaluate/flags/limit", Cookie: r.cookie, Body: map[string]any{}}); status != http.StatusForbidden {
		t.Errorf("a session cookie = %d, want 403", status)
	}
}

// Bulk: what the key may see, a strong ETag, 304 without evaluating, a new
// tag on a change of a flag or of the context, the event stream advertised.
func TestOFREPBulkEvaluation(t *testing.T) {
	t.Parallel()
	oe := newOFREPEnv(t)
	keysOf := func(got map[string]any) []string {
		var keys []string
		for _, f := range got["flags"].([]any) {
			keys = append(keys, f.(map[string]any)["key"].(string))
		}
		return keys
	}
	body := ctxOf("u1", map[string]any{"plan": "pro"})
	status, got, resp := oe.eval(t, oe.client.Key, "", body)
	if status != http.StatusOK {
		t.Fatalf("bulk = %d %v", status, got)
	}
	if d := cmp.Diff([]string{"dark-mode", "greeting", "layout", "limit", "nothing"}, keysOf(got)); d != "" {
		t.Errorf("client key sees (-want +got):\n%s", d)
	}
	streams := got["eventStreams"].([]any)
	if len(streams) != 1 || streams[0].(map[string]any)["type"] != "sse" ||
		!strings.HasPrefix(streams[0].(map[string]any)["url"].(string), oe.s.URL+"/ofrep/v1/events?token=") ||
		strings.Contains(streams[0].(map[string]any)["url"].(string), oe.client.Key[8:]) {
		t.Errorf("eventStreams = %v", streams)
	}
	etag := resp.Header.Get("ETag")
	if !strings.HasPrefix(etag, `"`) || resp.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("ETag %q, CORS %q", etag, resp.Header.Get("Access-Control-Allow-Origin"))
	}
	if _, got, _ := oe.eval(t, oe.server, "", body); !strings.Contains(strings.Join(keysOf(got), ","), "secret-launch") {
		t.Errorf("a server key's bulk lacks secret-launch: %v", keysOf(got))
	}
	conditional := func(tag string, body any) (int, string) {
		status, _, resp := oe.s.Do(t, apptest.Request{Method: "POST", Path: "/ofrep/v1/evaluate/flags?flagConfigEtag=x", Bearer: oe.client.Key, Header: map[string]string{"If-None-Match": tag}, Body: body})
		return status, resp.Header.Get("ETag")
	}
	if status, again := conditional(etag, body); status != http.StatusNotModified || again != etag {
		t.Errorf("unchanged = %d %q, want 304 %q", status, again, etag)
	}
	if status, other := conditional(etag, ctxOf("u2", nil)); status != http.StatusOK || other == etag {
		t.Errorf("another context = %d with tag %q, want 200 and a new tag", status, other)
	}
	must(t, oe.s, oe.admin, "PATCH", "/api/environments/"+oe.env.String()+"/flags/limit", map[string]any{"default_value": 20}, http.StatusOK, nil)
	// The hub applies a change milliseconds after the write is acknowledged,
	// as it does for /stream and the snapshot.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		status, changed := conditional(etag, body)
		if status == http.StatusOK && changed != etag {
			break
		}
		if status != http.StatusNotModified || time.Now().After(deadline) {
			t.Fatalf("after a change = %d with tag %q, want 200 and a new tag", status, changed)
		}
	}
	if status, got, _ := oe.eval(t, oe.client.Key, "", `{"context": 1}`); status != http.StatusBadRequest || got["errorCode"] != "INVALID_CONTEXT" {
		t.Errorf("bad bulk context = %d %v", status, got)
	}
}

// The configuration route in OFREP's names.
func TestOFREPConfiguration(t *testing.T) {
	t.Parallel()
	oe := newOFREPEnv(t)
	status, raw, _ := oe.s.Do(t, apptest.Request{Method: "GET", Path: "/ofrep/v1/configuration", Bearer: oe.client.Key})
	var got map[string]any
	_ = json.Unmarshal(raw, &got)
	want := map[string]any{"name": "Switchyard", "capabilities": map[string]any{
		"cacheInvalidation": map[string]any{"polling": map[string]any{"enabled": true, "minPollingIntervalMs": 30000.0}},
		"flagEvaluation":    map[string]any{"supportedTypes": []any{"boolean", "string", "int", "float", "object"}},
	}}
	if status != http.StatusOK || cmp.Diff(want, got) != "" {
		t.Errorf("configuration = %d %s", status, raw)
	}
}

// Browsers: preflights for any origin on OFREP and ingest routes.
func TestOFREPAndIngestCORS(t *testing.T) {
	t.Parallel()
	oe := newOFREPEnv(t)
	for _, path := range []string{"/ofrep/v1/evaluate/flags", "/ofrep/v1/evaluate/flags/limit", "/ofrep/v1/configuration",
		"/api/environments/" + oe.env.String() + "/impressions", "/api/environments/" + oe.env.String() + "/events"} {
		req, _ := http.NewRequest(http.MethodOptions, oe.s.URL+path, nil)
		req.Header.Set("Origin", "https://app.example.com")
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "authorization, content-type, if-none-match, x-api-key")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		allow := strings.ToLower(resp.Header.Get("Access-Control-Allow-Headers"))
		if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != "*" ||
			!strings.Contains(allow, "x-api-key") || !strings.Contains(allow, "if-none-match") || !strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "ETag") {
			t.Errorf("preflight %s = %d %v", path, resp.StatusCode, resp.Header)
		}
	}
	status, _, resp := oe.s.Do(t, apptest.Request{Method: "POST", Path: "/api/environments/" + oe.env.String() + "/events", Bearer: oe.client.Key,
		Body: []map[string]any{{"event_key": "signup", "user_id": "u1"}}})
	if status != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("ingest with a client key = %d, CORS %q", status, resp.Header.Get("Access-Control-Allow-Origin"))
	}
}

// The event stream: a token in the URL, a refetchEvaluation after a change,
// nothing but notices, and revocation ends it.
func TestOFREPEventStream(t *testing.T) {
	t.Parallel()
	oe := newOFREPEnv(t, app.WithStreamTiming(time.Hour, time.Hour))
	_, got, _ := oe.eval(t, oe.client.Key, "", map[string]any{})
	url := got["eventStreams"].([]any)[0].(map[string]any)["url"].(string)
	c := openURLStream(t, strings.Replace(url, oe.s.URL, "", 1), oe.s)
	if c.resp.StatusCode != http.StatusOK || c.resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("event stream = %d %v", c.resp.StatusCode, c.resp.Header)
	}
	must(t, oe.s, oe.admin, "PATCH", "/api/environments/"+oe.env.String()+"/flags/limit", map[string]any{"default_value": 30}, http.StatusOK, nil)
	ev := c.next(t)
	var data map[string]any
	if err := json.Unmarshal([]byte(ev.Data), &data); err != nil || ev.Name != "message" || data["type"] != "refetchEvaluation" || data["etag"] == "" || len(data) != 2 {
		t.Errorf("event = %+v, want an unnamed refetchEvaluation with an etag", ev)
	}
	if bad := openURLStream(t, "/ofrep/v1/events?token=AAAA", oe.s); bad.resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a forged token = %d, want 401", bad.resp.StatusCode)
	}
	must(t, oe.s, oe.admin, "DELETE", "/api/projects/"+mustProjectOf(t, oe)+"/keys/"+itoa(oe.client.ID), nil, http.StatusNoContent, nil)
	c.ended(t)
	if again := openURLStream(t, strings.Replace(url, oe.s.URL, "", 1), oe.s); again.resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the token of a revoked key = %d, want 401", again.resp.StatusCode)
	}
}

// A browser's event stream reconnects while the database is down: the
// stream's token names a key that the evaluation which handed out the URL
// put in the key cache.
func TestOFREPEventStreamReconnectsDuringADatabaseOutage(t *testing.T) {
	pg := testenv.StartPostgres(t)
	oe := newOFREPEnvOn(t, map[string]string{"DATABASE_URL": pg.URL}, app.WithStreamTiming(time.Hour, time.Hour))
	_, got, _ := oe.eval(t, oe.client.Key, "", map[string]any{})
	url := got["eventStreams"].([]any)[0].(map[string]any)["url"].(string)
	pg.Stop(t, "fast")
	c := openURLStream(t, strings.Replace(url, oe.s.URL, "", 1), oe.s)
	if c.resp.StatusCode != http.StatusOK || c.resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("event stream during the outage = %d %v, want 200", c.resp.StatusCode, c.resp.Header)
	}
}

func mustProjectOf(t *testing.T, oe *ofrepEnv) string {
	t.Helper()
	var id uuid.UUID
	if err := oe.s.DB(t).QueryRow(t.Context(), `SELECT project_id FROM environments WHERE id = $1`, oe.env).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id.String()
}

// openURLStream opens an SSE path whose unnamed events come as "message".
func openURLStream(t *testing.T, pathAndQuery string, s *apptest.Server) *sseClient {
	t.Helper()
	path, query, _ := strings.Cut(pathAndQuery, "?")
	c := openStreamAt(t, s, path, "?"+query, nil)
	return c
}

// A single evaluation with a targeting key is an impression; an anonymous
// one and a bulk evaluation are not.
func TestOFREPImpressions(t *testing.T) {
	t.Parallel()
	oe := newOFREPEnv(t)
	oe.eval(t, oe.client.Key, "greeting", ctxOf("ada", map[string]any{"country": "DE"}))
	oe.eval(t, oe.client.Key, "greeting", map[string]any{})
	oe.eval(t, oe.client.Key, "", ctxOf("bob", nil))
	var page struct {
		Items []struct {
			FlagKey string  `json:"flag_key"`
			UserID  *string `json:"user_id"`
			Value   string  `json:"value"`
		} `json:"items"`
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		must(t, oe.s, oe.admin, "GET", "/api/environments/"+oe.env.String()+"/impressions", nil, http.StatusOK, &page)
		if len(page.Items) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(page.Items) != 1 || page.Items[0].FlagKey != "greeting" || *page.Items[0].UserID != "ada" || page.Items[0].Value != "hallo" {
		t.Errorf("impressions = %+v, want one of greeting for ada with hallo", page.Items)
	}
}

// Nothing a client key can reach reveals a rule, a segment, a variant it did
// not receive or another user's data (docs/reference/ofrep.md, Client-side
// availability).
func TestClientKeyLearnsNothingElse(t *testing.T) {
	t.Parallel()
	oe := newOFREPEnv(t)
	envPath := "/api/environments/" + oe.env.String()
	must(t, oe.s, oe.admin, "POST", envPath+"/segments", map[string]any{"key": "acme-insiders", "name": "Acme insiders",
		"rules": []map[string]any{{"attribute": "email", "operator": "ends_with", "values": []string{"@acme-secret.example"}}}}, http.StatusOK, nil)
	must(t, oe.s, oe.admin, "POST", envPath+"/flags", map[string]any{"key": "insider-pricing", "is_enabled": true, "client_side": true,
		"flag_type": "string", "default_value": "public-price",
		"rules":    []map[string]any{{"segment_key": "acme-insiders", "variant": "insider-price-variant"}},
		"variants": []map[string]any{{"weight": 1, "value": "public-price"}, {"weight": 0, "value": "unreleased-variant"}}}, http.StatusOK, nil)
	must(t, oe.s, oe.admin, "POST", envPath+"/impressions", []map[string]any{{"flag_key": "insider-pricing", "user_id": "other-user-42", "value": "insider-price-variant", "timestamp": time.Now().UTC().Format(time.RFC3339)}}, http.StatusNoContent, nil)

	var bodies []string
	record := func(status int, raw []byte) { bodies = append(bodies, string(raw)) }
	for _, body := range []any{ctxOf("me", map[string]any{"email": "me@example.com"}), map[string]any{}} {
		status, raw, _ := oe.s.Do(t, apptest.Request{Method: "POST", Path: "/ofrep/v1/evaluate/flags/insider-pricing", Bearer: oe.client.Key, Body: body})
		record(status, raw)
		status, raw, _ = oe.s.Do(t, apptest.Request{Method: "POST", Path: "/ofrep/v1/evaluate/flags", Bearer: oe.client.Key, Body: body})
		record(status, raw)
	}
	status, raw, _ := oe.s.Do(t, apptest.Request{Method: "GET", Path: "/ofrep/v1/configuration", Bearer: oe.client.Key})
	record(status, raw)
	for _, path := range []string{envPath + "/impressions", envPath + "/segments", envPath + "/flags/insider-pricing", envPath + "/impressions/stats", envPath + "/events/keys"} {
		status, raw, _ := oe.s.Do(t, apptest.Request{Method: "GET", Path: path, Bearer: oe.client.Key})
		if status != http.StatusForbidden {
			t.Errorf("GET %s with a client key = %d, want 403", path, status)
		}
		record(status, raw)
	}
	for _, secret := range []string{"acme-insiders", "acme-secret", "insider-price-variant", "unreleased-variant", "other-user-42", `"rules"`, `"segment_key"`, "secret-launch"} {
		for _, b := range bodies {
			if strings.Contains(b, secret) {
				t.Errorf("a response to a client key reveals %q: %s", secret, b)
			}
		}
	}
}
