package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/server/app"
	"github.com/switchyard/switchyard/server/internal/apptest"
)

// Every operation of api/openapi.yaml that takes a JSON body answers a body
// of the wrong JSON type (null, a number, a string, a boolean where an
// object or an array belongs) with 400 and changes nothing; so does null for
// an object-valued member (OFREP's "context": null), with 400, or 422 where
// the operation reports broken rules that way. Each request carries the
// credential its operation is meant for and names real resources, so only
// the body stands between it and a write.
func TestWrongJSONTypeBodiesAreRefused(t *testing.T) {
	t.Parallel()
	doc, err := openapi3.NewLoader().LoadFromData(api.OpenAPI)
	if err != nil {
		t.Fatalf("load api/openapi.yaml: %v", err)
	}
	w := seedBodyWorld(t)

	type op struct {
		method, path string
		op           *openapi3.Operation
		schema       *openapi3.Schema
	}
	var ops []op
	for _, path := range doc.Paths.InMatchingOrder() {
		for method, o := range doc.Paths.Value(path).Operations() {
			if o.RequestBody == nil || o.RequestBody.Value == nil {
				continue
			}
			mt := o.RequestBody.Value.Content.Get("application/json")
			if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
				continue
			}
			ops = append(ops, op{method, path, o, mt.Schema.Value})
		}
	}
	slices.SortFunc(ops, func(a, b op) int { return strings.Compare(a.op.OperationID, b.op.OperationID) })
	if len(ops) < 30 {
		t.Fatalf("found %d operations with a JSON body; the document has more", len(ops))
	}

	type body struct {
		label, text string
		member      bool // null for an object-valued member, not a wrong top level
	}
	for _, o := range ops {
		bodies := []body{{"null", `null`, false}, {"number", `42`, false}, {"string", `"x"`, false}, {"boolean", `true`, false}}
		for _, name := range slices.Sorted(maps.Keys(o.schema.Properties)) {
			p := o.schema.Properties[name].Value
			if p != nil && p.Type.Is(openapi3.TypeObject) && !p.Nullable {
				bodies = append(bodies, body{name + "=null", fmt.Sprintf(`{%q:null}`, name), true})
			}
		}
		path := w.fill(t, o.path)
		ofrep := slices.Contains(o.op.Tags, "ofrep")
		for _, b := range bodies {
			t.Run(o.op.OperationID+" "+o.method+" body "+b.label, func(t *testing.T) {
				req := w.credential(o.op)
				req.Method, req.Path, req.Body = o.method, path, b.text
				before := w.fingerprint(t)
				status, raw, _ := w.s.Do(t, req)
				want := []int{http.StatusBadRequest}
				if b.member && o.op.Responses.Status(http.StatusUnprocessableEntity) != nil {
					want = append(want, http.StatusUnprocessableEntity)
				}
				if !slices.Contains(want, status) {
					t.Errorf("%s %s with %s = %d %s, want %v", o.method, path, b.text, status, raw, want)
				}
				if ofrep {
					checkOFREPError(t, raw, strings.Contains(o.path, "{key}"), w.flag)
				} else {
					var e errorBody
					if err := json.Unmarshal(raw, &e); err != nil || e.Error == "" {
						t.Errorf("error body %s is not {\"error\": ...}", raw)
					}
				}
				if diff := cmp.Diff(before, w.fingerprint(t)); diff != "" {
					t.Errorf("%s %s with %s changed the database (-before +after):\n%s", o.method, path, b.text, diff)
				}
			})
		}
	}
}

// checkOFREPError checks OFREP's 400 body: INVALID_CONTEXT with details, and
// the flag's key on the single-flag route only.
func checkOFREPError(t *testing.T, raw []byte, single bool, flag string) {
	t.Helper()
	var e map[string]string
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Errorf("OFREP error body %s: %v", raw, err)
		return
	}
	if e["errorCode"] != "INVALID_CONTEXT" || e["errorDetails"] == "" {
		t.Errorf("OFREP error body %s, want errorCode INVALID_CONTEXT and errorDetails", raw)
	}
	if key, ok := e["key"]; single && key != flag || !single && ok {
		t.Errorf("OFREP error body %s: key %q (single route: %v)", raw, key, single)
	}
}

// bodyWorld is an instance with one resource of every kind an operation's
// path can name, and the credentials to reach them.
type bodyWorld struct {
	s       *apptest.Server
	cookie  *http.Cookie // an admin's session
	sdkKey  string       // a server key of production
	flag    string
	ids     map[string]string // "flags/{key}" -> the seeded flag's key, ...
	queries string            // the fingerprint query, built once
}

func seedBodyWorld(t *testing.T) *bodyWorld {
	t.Helper()
	// No builder of experiment counts: it marks the seeded experiment's
	// counts ready in the background, and each check compares the whole
	// database before and after one request.
	s := apptest.Start(t, nil, app.WithoutExperimentCounts())
	s.User(t, "admin@example.com", "admin")
	memberID, _ := s.User(t, "member@example.com", "viewer")
	project, envs := s.DefaultProject(t)
	prod := envs["production"].String()
	s.Member(t, project, memberID, "viewer")
	r := login(t, s, "admin@example.com", "password123")
	if r.cookie == nil {
		t.Fatalf("login = %d %v", r.status, r.body)
	}
	w := &bodyWorld{s: s, cookie: r.cookie, sdkKey: s.SDKKey(t, envs["production"]), flag: "checkout"}
	id := func(path string, body any) string {
		t.Helper()
		req := w.session()
		req.Method, req.Path, req.Body = "POST", path, body
		status, raw, _ := s.Do(t, req)
		if status != http.StatusOK {
			t.Fatalf("POST %s = %d %s", path, status, raw)
		}
		var v struct {
			ID json.RawMessage `json:"id"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		return strings.Trim(string(v.ID), `"`)
	}
	env := "/api/environments/" + prod
	id(env+"/flags", map[string]any{"key": w.flag, "is_enabled": true})
	id(env+"/segments", map[string]any{"key": "beta", "name": "Beta"})
	id(env+"/experiments", map[string]any{"key": "exp", "name": "Exp", "flag_key": w.flag, "goal_event_key": "bought"})
	// Disabled, so no delivery runs while the sweep compares the database.
	hook := id(env+"/webhooks", map[string]any{"name": "hook", "url": "http://127.0.0.1:9/hook", "enabled": false})
	chat := id(env+"/integrations", map[string]any{"kind": "slack", "name": "chat", "webhook_url": "http://127.0.0.1:9/chat", "enabled": false})
	// A pending change request: production now requires approval, so a
	// flag PATCH opens one.
	req := w.session()
	req.Method, req.Path, req.Body = "POST", "/api/projects/"+project.String()+"/environments/"+prod+"/require-approval", map[string]any{"require_approval": true}
	if status, raw, _ := s.Do(t, req); status != http.StatusOK {
		t.Fatalf("require approval = %d %s", status, raw)
	}
	req = w.session()
	req.Method, req.Path, req.Body = "PATCH", env+"/flags/"+w.flag, map[string]any{"is_enabled": false}
	status, raw, _ := s.Do(t, req)
	var cr struct {
		ID json.RawMessage `json:"id"`
	}
	if status != http.StatusAccepted || json.Unmarshal(raw, &cr) != nil {
		t.Fatalf("PATCH flag under approval = %d %s, want 202 with a change request", status, raw)
	}
	w.ids = map[string]string{
		"projects/{project_id}": project.String(),
		"environments/{env_id}": prod,
		"flags/{key}":           w.flag,
		"segments/{key}":        "beta",
		"experiments/{key}":     "exp",
		"members/{user_id}":     strconv.FormatInt(memberID, 10),
		"users/{id}":            strconv.FormatInt(memberID, 10),
		"change-requests/{id}":  strings.Trim(string(cr.ID), `"`),
		"webhooks/{id}":         hook,
		"integrations/{id}":     chat,
		"evaluate/flags/{key}":  w.flag, // OFREP
	}
	return w
}

// fill replaces each path parameter with the seeded resource its segment
// names; a parameter nothing was seeded for fails the test, so a new route
// cannot slip through with a made-up identifier.
func (w *bodyWorld) fill(t *testing.T, template string) string {
	t.Helper()
	segs := strings.Split(template, "/")
	for i, seg := range segs {
		if !strings.HasPrefix(seg, "{") {
			continue
		}
		k := seg
		if i > 0 {
			k = segs[i-1] + "/" + seg
		}
		v, ok := w.ids[k]
		if !ok {
			t.Fatalf("%s: nothing seeded for %s", template, k)
		}
		segs[i] = v
	}
	return strings.Join(segs, "/")
}

func (w *bodyWorld) session() apptest.Request {
	return apptest.Request{Cookie: w.cookie, Header: map[string]string{"X-Service-Request": "true"}}
}

// credential picks the credential each operation is meant for: none for
// the public ones, the server SDK key for what SDKs call (OFREP and the
// ingest batches), an admin's dashboard session for the rest.
func (w *bodyWorld) credential(op *openapi3.Operation) apptest.Request {
	switch {
	case op.Security != nil && len(*op.Security) == 0:
		return apptest.Request{}
	case slices.Contains(op.Tags, "ofrep"), strings.HasPrefix(op.OperationID, "ingest"):
		return apptest.Request{Bearer: w.sdkKey}
	}
	return w.session()
}

// fingerprint is every table's row count and a hash of its rows.
func (w *bodyWorld) fingerprint(t *testing.T) map[string]string {
	t.Helper()
	ctx := context.Background()
	pool := w.s.DB(t)
	if w.queries == "" {
		// The audit trail's sealer writes hashes in the background, whatever
		// the request did: its two tables are left out.
		rows, err := pool.Query(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = 'public'
			AND tablename NOT IN ('goose_db_version', 'audit_trail_hashes', 'audit_trail_head') ORDER BY 1`)
		if err != nil {
			t.Fatal(err)
		}
		var parts []string
		for rows.Next() {
			var name string
			if err := rows.Scan(&name); err != nil {
				t.Fatal(err)
			}
			parts = append(parts, fmt.Sprintf(`SELECT '%[1]s', count(*) || ' rows ' || coalesce(md5(string_agg(t::text, E'\n' ORDER BY t::text)), '') FROM %[1]q t`, name))
		}
		if err := rows.Err(); err != nil || len(parts) < 20 {
			t.Fatalf("list tables: %v (%d)", err, len(parts))
		}
		w.queries = strings.Join(parts, " UNION ALL ")
	}
	rows, err := pool.Query(ctx, w.queries)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name, sum string
		if err := rows.Scan(&name, &sum); err != nil {
			t.Fatal(err)
		}
		out[name] = sum
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
