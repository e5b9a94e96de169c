package app_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/switchyard/switchyard/server/app"
	"github.com/switchyard/switchyard/server/internal/apptest"
)

// trailFlagWrites makes n flag writes in the Default project's Production
// environment as bearer, and returns the environment's id.
func trailFlagWrites(t *testing.T, s *apptest.Server, bearer, key string, n int) string {
	t.Helper()
	_, envs := s.DefaultProject(t)
	env := envs["production"].String()
	must(t, s, bearer, http.MethodPost, "/api/environments/"+env+"/flags", map[string]any{"key": key, "is_enabled": false}, http.StatusOK, nil)
	for i := 1; i < n; i++ {
		must(t, s, bearer, http.MethodPatch, "/api/environments/"+env+"/flags/"+key, map[string]any{"rollout_percentage": i}, http.StatusOK, nil)
	}
	return env
}

// trailSealed waits until every entry bearer can read is sealed.
func trailSealed(t *testing.T, s *apptest.Server, bearer string) []trailEntry {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		entries := trail(t, s, bearer, "")
		sealed := true
		for _, e := range entries {
			sealed = sealed && e.Hash != nil
		}
		if sealed {
			return entries
		}
		if time.Now().After(deadline) {
			t.Fatal("entries still unsealed after 20 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestAuditTrailReaders(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	project, envs := s.DefaultProject(t)
	_, admin := s.User(t, "admin@example.com", "admin")
	ownerID, owner := s.User(t, "owner@example.com", "viewer")
	s.Member(t, project, ownerID, "admin")
	editorID, editor := s.User(t, "editor@example.com", "viewer")
	s.Member(t, project, editorID, "editor")
	_, outsider := s.User(t, "outsider@example.com", "viewer")
	trailFlagWrites(t, s, admin, "checkout", 3)
	must(t, s, admin, http.MethodPost, "/api/projects", map[string]any{"name": "Elsewhere"}, http.StatusOK, nil)

	all := trail(t, s, admin, "")
	if len(all) < 4 {
		t.Fatalf("admin reads %d entries, want the 3 flag writes and the other project's creation", len(all))
	}
	for i := 1; i < len(all); i++ {
		if !all[i].At.Before(all[i-1].At) && !(all[i].At.Equal(all[i-1].At) && all[i].ID < all[i-1].ID) {
			t.Errorf("entries %d and %d are not newest first", all[i-1].ID, all[i].ID)
		}
	}
	// A project admin reads their project's entries, and no workspace-level ones.
	mine := trail(t, s, owner, "")
	if len(mine) == 0 {
		t.Fatal("the project admin reads nothing")
	}
	for _, e := range mine {
		if e.ProjectID == nil || *e.ProjectID != project {
			t.Errorf("project admin reads entry %d (%s) of project %v", e.ID, e.Action, e.ProjectID)
		}
	}
	must(t, s, owner, http.MethodGet, "/api/audit?project_id=00000000-0000-4000-8000-000000000001", nil, http.StatusForbidden, nil)
	must(t, s, owner, http.MethodGet, "/api/audit?environment_id="+envs["production"].String(), nil, http.StatusOK, nil)
	for name, bearer := range map[string]string{"an editor": editor, "an outsider": outsider, "an SDK key": s.SDKKey(t, envs["production"])} {
		for _, path := range []string{"/api/audit", "/api/audit/export"} {
			if status, raw := call(t, s, bearer, http.MethodGet, path, nil); status != http.StatusForbidden {
				t.Errorf("%s: GET %s = %d %s, want 403", name, path, status, raw)
			}
		}
	}
	must(t, s, "", http.MethodGet, "/api/audit", nil, http.StatusUnauthorized, nil)
	must(t, s, owner, http.MethodGet, "/api/audit/verify", nil, http.StatusForbidden, nil)
}

func TestAuditTrailFiltersAndPages(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, admin := s.User(t, "admin@example.com", "admin")
	env := trailFlagWrites(t, s, admin, "search", 7)

	// Pages of 3, then 3, then 1, with no entry twice.
	seen := map[int64]bool{}
	cursor := ""
	for page := 0; ; page++ {
		path := "/api/audit?limit=3&resource_id=search"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		var p struct {
			Items      []trailEntry `json:"items"`
			NextCursor *string      `json:"next_cursor"`
		}
		must(t, s, admin, http.MethodGet, path, nil, http.StatusOK, &p)
		for _, e := range p.Items {
			if seen[e.ID] {
				t.Errorf("entry %d on two pages", e.ID)
			}
			seen[e.ID] = true
		}
		if p.NextCursor == nil {
			if page != 2 || len(seen) != 7 {
				t.Errorf("%d pages, %d entries; want 3 pages of the 7 writes", page+1, len(seen))
			}
			break
		}
		cursor = *p.NextCursor
	}
	created := trailFind(t, trail(t, s, admin, "action=flag.created"), "flag.created", "search")
	if created.EnvironmentID == nil || created.EnvironmentID.String() != env || created.Resource.Type != "flag" || created.Before != nil && string(created.Before) != "null" {
		t.Errorf("flag.created = %+v", created)
	}
	for query, want := range map[string]int{
		"action=flag.*":             7,
		"action=flag.updated":       6,
		"actor=ADMIN@example.com":   7,
		"resource_type=flag":        7,
		"resource_type=segment":     0,
		"environment_id=" + env:     7,
		"from=2000-01-01T00:00:00Z": 7,
		"to=2000-01-01T00:00:00Z":   0,
	} {
		got := 0
		for _, e := range trail(t, s, admin, query+"&resource_id=search") {
			if e.Resource.ID == "search" {
				got++
			}
		}
		if got != want {
			t.Errorf("%s: %d entries, want %d", query, got, want)
		}
	}
	// limit is clamped, never rejected.
	for _, limit := range []string{"0", "100000"} {
		var p struct {
			Items []trailEntry `json:"items"`
		}
		must(t, s, admin, http.MethodGet, "/api/audit?resource_id=search&limit="+limit, nil, http.StatusOK, &p)
		if want := map[string]int{"0": 1, "100000": 7}[limit]; len(p.Items) != want {
			t.Errorf("limit=%s: %d entries, want %d", limit, len(p.Items), want)
		}
	}
	for _, query := range []string{"cursor=nonsense", "cursor=1.0", "resource_type=dragon", "action=flag.%25", "action=Flag.updated", "from=yesterday", "project_id=nope", "limit=x", "limit=1&limit=2"} {
		if status, raw := call(t, s, admin, http.MethodGet, "/api/audit?"+query, nil); status != http.StatusUnprocessableEntity && status != http.StatusBadRequest {
			t.Errorf("%s = %d %s, want 422", query, status, raw)
		}
	}
}

func TestAuditTrailRequestInfo(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		trusted string
		wantIP  string
	}{
		"direct":                  {"", "127.0.0.1"},
		"through a trusted proxy": {"127.0.0.0/8, ::1", "203.0.113.9"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := apptest.Start(t, map[string]string{"TRUSTED_PROXIES": tc.trusted})
			_, admin := s.User(t, "admin@example.com", "admin")
			status, raw, _ := s.Do(t, apptest.Request{
				Method: http.MethodPost, Path: "/api/projects", Bearer: admin, Body: map[string]any{"name": "Acme"},
				Header: map[string]string{"X-Request-Id": "req-123", "User-Agent": "terraform/1.9", "X-Forwarded-For": "198.51.100.1, 203.0.113.9"},
			})
			if status != http.StatusOK {
				t.Fatalf("POST /api/projects = %d %s", status, raw)
			}
			e := trailFind(t, trail(t, s, admin, "resource_type=project"), "project.created", "")
			if e.Request.RequestID == nil || *e.Request.RequestID != "req-123" || e.Request.IP == nil || *e.Request.IP != tc.wantIP ||
				e.Request.UserAgent == nil || *e.Request.UserAgent != "terraform/1.9" {
				t.Errorf("request = %+v, want req-123 from %s by terraform/1.9", e.Request, tc.wantIP)
			}
		})
	}
}

func TestAuditTrailExport(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, admin := s.User(t, "admin@example.com", "admin")
	trailFlagWrites(t, s, admin, "export-me", 5)
	newest := trail(t, s, admin, "resource_id=export-me")

	for _, gz := range []bool{false, true} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, s.URL+"/api/audit/export?resource_id=export-me", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+admin)
		if gz {
			req.Header.Set("Accept-Encoding", "gzip")
		}
		resp, err := http.DefaultTransport.RoundTrip(req) // no transparent decompression
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/x-ndjson" {
			t.Fatalf("export (gzip %v) = %d %s %v", gz, resp.StatusCode, resp.Header.Get("Content-Type"), err)
		}
		if gz {
			if resp.Header.Get("Content-Encoding") != "gzip" {
				t.Fatal("gzip asked for, not sent")
			}
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if body, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		}
		var ids []int64
		sc := bufio.NewScanner(bytes.NewReader(body))
		for sc.Scan() {
			var e trailEntry
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				t.Fatalf("line %q: %v", sc.Text(), err)
			}
			ids = append(ids, e.ID)
		}
		if len(ids) != len(newest) || len(ids) != 5 {
			t.Fatalf("exported %d entries, listed %d, want 5", len(ids), len(newest))
		}
		for i := range ids {
			if ids[i] != newest[len(newest)-1-i].ID {
				t.Errorf("export order %v is not the list's reversed", ids)
				break
			}
		}
	}
}

func TestAuditTrailVerifyFindsHandEdits(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil, app.WithWorkerInterval(20*time.Millisecond))
	_, admin := s.User(t, "admin@example.com", "admin")
	trailFlagWrites(t, s, admin, "tamper", 4)
	entries := trailSealed(t, s, admin)
	var v struct {
		OK         bool   `json:"ok"`
		Checked    int64  `json:"checked"`
		FirstBadID *int64 `json:"first_bad_id"`
	}
	must(t, s, admin, http.MethodGet, "/api/audit/verify", nil, http.StatusOK, &v)
	if !v.OK || v.Checked != int64(len(entries)) || v.FirstBadID != nil {
		t.Fatalf("verify = %+v, want ok over %d entries", v, len(entries))
	}
	victim := trailFind(t, entries, "flag.updated", "tamper").ID
	conn, err := s.DB(t).Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	for _, sql := range []string{
		"SET session_replication_role = replica",
		`UPDATE audit_trail SET body = convert_to(replace(convert_from(body, 'UTF8'), 'tamper', 'tamperd'), 'UTF8') WHERE id = $1`,
		"SET session_replication_role = origin",
	} {
		var args []any
		if strings.Contains(sql, "$1") {
			args = append(args, victim)
		}
		if _, err := conn.Exec(context.Background(), sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	must(t, s, admin, http.MethodGet, "/api/audit/verify", nil, http.StatusOK, &v)
	if v.OK || v.FirstBadID == nil || *v.FirstBadID != victim {
		t.Errorf("verify after editing entry %d = %+v", victim, v)
	}
	// A range that ends before the edit still verifies.
	to := url.QueryEscape(trailFind(t, entries, "flag.created", "tamper").At.Format(time.RFC3339Nano))
	must(t, s, admin, http.MethodGet, "/api/audit/verify?to="+to, nil, http.StatusOK, &v)
	if !v.OK {
		t.Errorf("verify before the edited entry = %+v", v)
	}
}
