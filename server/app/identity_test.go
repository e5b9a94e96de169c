package app_test

// Helpers shared by the identity_*_test.go files: the management plane
// (projects, members, environments, SDK keys, tokens, users) driven through
// the real HTTP server.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/server/internal/apptest"
)

// call sends one request with a bearer credential (none when empty) and
// returns the status and the raw body.
func call(t *testing.T, s *apptest.Server, bearer, method, path string, body any) (int, []byte) {
	t.Helper()
	status, raw, _ := s.Do(t, apptest.Request{Method: method, Path: path, Bearer: bearer, Body: body})
	return status, raw
}

// must is call that fails the test unless the answer has status want, and
// decodes the body into out when out is not nil.
func must(t *testing.T, s *apptest.Server, bearer, method, path string, body any, want int, out any) {
	t.Helper()
	status, raw := call(t, s, bearer, method, path, body)
	if status != want {
		t.Fatalf("%s %s = %d %s, want %d", method, path, status, raw, want)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: decode %s: %v", method, path, raw, err)
		}
	}
}

// The API's bodies, as tests read them.
type (
	envSummary struct {
		ID        uuid.UUID `json:"id"`
		Name      string    `json:"name"`
		Slug      string    `json:"slug"`
		Color     string    `json:"color"`
		IsDefault bool      `json:"is_default"`
		// RequireApproval is an extension (docs/api.md).
		RequireApproval bool `json:"require_approval"`
	}
	sdkKeyBody struct {
		ID              int64     `json:"id"`
		Name            string    `json:"name"`
		Key             string    `json:"key"`
		Prefix          string    `json:"prefix"`
		EnvironmentID   uuid.UUID `json:"environment_id"`
		EnvironmentName string    `json:"environment_name"`
	}
	projectBody struct {
		ID               uuid.UUID    `json:"id"`
		Name             string       `json:"name"`
		Slug             string       `json:"slug"`
		EnvironmentCount int          `json:"environment_count"`
		MemberCount      int          `json:"member_count"`
		Environments     []envSummary `json:"environments"`
		SDKKey           *sdkKeyBody  `json:"sdk_key"`
	}
	environmentBody struct {
		ID              uuid.UUID `json:"id"`
		ProjectID       uuid.UUID `json:"project_id"`
		Name            string    `json:"name"`
		Slug            string    `json:"slug"`
		Color           string    `json:"color"`
		IsDefault       bool      `json:"is_default"`
		RequireApproval bool      `json:"require_approval"`
	}
	memberBody struct {
		UserID int64  `json:"user_id"`
		Name   string `json:"name"`
		Email  string `json:"email"`
		Role   string `json:"role"`
	}
	userBody struct {
		ID    int64  `json:"id"`
		Name  string `json:"name"`
		Email string `json:"email"`
		Role  string `json:"role"`
	}
)

// envBySlug returns the id of a project's environment with slug.
func (p projectBody) envBySlug(t *testing.T, slug string) uuid.UUID {
	t.Helper()
	for _, e := range p.Environments {
		if e.Slug == slug {
			return e.ID
		}
	}
	t.Fatalf("project %s has no environment %q", p.Slug, slug)
	return uuid.Nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// uniq returns a name no other call in this test binary returns.
var uniqCounter atomic.Int64

func uniq(prefix string) string { return fmt.Sprintf("%s-%d", prefix, uniqCounter.Add(1)) }

// newProject creates a project as the workspace admin.
func newProject(t *testing.T, s *apptest.Server, admin string) projectBody {
	t.Helper()
	var p projectBody
	must(t, s, admin, "POST", "/api/projects", map[string]string{"name": uniq("Project")}, http.StatusOK, &p)
	return p
}

// newEnv creates an environment in a project as admin.
func newEnv(t *testing.T, s *apptest.Server, admin string, project uuid.UUID) environmentBody {
	t.Helper()
	var e environmentBody
	slug := uniq("env")
	must(t, s, admin, "POST", "/api/projects/"+project.String()+"/environments",
		map[string]string{"name": slug, "slug": slug}, http.StatusOK, &e)
	return e
}

// newKey creates an SDK key in an environment as admin.
func newKey(t *testing.T, s *apptest.Server, admin string, project, env uuid.UUID) sdkKeyBody {
	t.Helper()
	var k sdkKeyBody
	must(t, s, admin, "POST", "/api/projects/"+project.String()+"/keys",
		map[string]any{"name": uniq("key"), "environment_id": env}, http.StatusOK, &k)
	return k
}

// concurrently runs each of fns in its own goroutine, released together by a
// barrier, and returns their statuses in order.
func concurrently(fns ...func() int) []int {
	statuses := make([]int, len(fns))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			statuses[i] = fn()
		}()
	}
	close(start)
	wg.Wait()
	return statuses
}

// send is call for goroutines other than the test's: it never stops the
// test, it reports a transport failure with t.Errorf and answers 0.
func send(t *testing.T, s *apptest.Server, bearer, method, path string, body any) int {
	var r io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			t.Errorf("encode body: %v", err)
			return 0
		}
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, s.URL+path, r)
	if err != nil {
		t.Errorf("%s %s: %v", method, path, err)
		return 0
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("%s %s: %v", method, path, err)
		return 0
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// count returns how many of statuses equal status.
func count(statuses []int, status int) int {
	n := 0
	for _, s := range statuses {
		if s == status {
			n++
		}
	}
	return n
}

// sdkKeyWorks reports whether an SDK key still authenticates, on a route of
// its own environment: anything but 401 means the key was accepted.
func sdkKeyWorks(t *testing.T, s *apptest.Server, key string, env uuid.UUID) bool {
	t.Helper()
	status, _ := call(t, s, key, "GET", "/api/environments/"+env.String()+"/flags", nil)
	return status != http.StatusUnauthorized
}
