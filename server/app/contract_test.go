package app_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/switchyard/switchyard/server/internal/apptest"
)

type route struct{ method, path string }

// contractRoutes is every route Switchyard promises, transcribed by
// hand so that a route dropped from api/openapi.yaml fails a test.
var contractRoutes = []route{
	{"GET", "/health"},
	{"GET", "/api/auth/workspace"},
	{"POST", "/api/auth/login"},
	{"POST", "/api/auth/logout"},
	{"GET", "/api/auth/me"},
	{"POST", "/api/auth/setup"},
	{"GET", "/api/auth/sso"},
	{"GET", "/api/auth/oidc/login"},
	{"GET", "/api/auth/oidc/callback"},
	{"GET", "/api/workspace/sso"},
	{"PUT", "/api/workspace/sso"},
	{"DELETE", "/api/workspace/sso"},
	{"GET", "/api/openapi.json"},
	{"GET", "/api/projects"},
	{"POST", "/api/projects"},
	{"PATCH", "/api/projects/{project_id}"},
	{"DELETE", "/api/projects/{project_id}"},
	{"GET", "/api/projects/{project_id}/members"},
	{"POST", "/api/projects/{project_id}/members"},
	{"PATCH", "/api/projects/{project_id}/members/{user_id}"},
	{"DELETE", "/api/projects/{project_id}/members/{user_id}"},
	{"GET", "/api/projects/{project_id}/environments"},
	{"POST", "/api/projects/{project_id}/environments"},
	{"PATCH", "/api/projects/{project_id}/environments/{env_id}"},
	{"DELETE", "/api/projects/{project_id}/environments/{env_id}"},
	{"POST", "/api/projects/{project_id}/environments/{env_id}/default"},
	{"POST", "/api/projects/{project_id}/environments/{env_id}/require-approval"},
	{"GET", "/api/projects/{project_id}/keys"},
	{"POST", "/api/projects/{project_id}/keys"},
	{"DELETE", "/api/projects/{project_id}/keys/{id}"},
	{"GET", "/api/projects/{project_id}/flags/diff"},
	{"GET", "/api/environments/{env_id}/flags"},
	{"GET", "/api/environments/{env_id}/flags/{key}"},
	{"POST", "/api/environments/{env_id}/flags"},
	{"PATCH", "/api/environments/{env_id}/flags/{key}"},
	{"DELETE", "/api/environments/{env_id}/flags/{key}"},
	{"POST", "/api/environments/{env_id}/flags/{key}/promote"},
	{"POST", "/api/environments/{env_id}/flags/{key}/archive"},
	{"POST", "/api/environments/{env_id}/flags/{key}/unarchive"},
	{"GET", "/api/environments/{env_id}/segments"},
	{"GET", "/api/environments/{env_id}/segments/{key}"},
	{"POST", "/api/environments/{env_id}/segments"},
	{"PATCH", "/api/environments/{env_id}/segments/{key}"},
	{"DELETE", "/api/environments/{env_id}/segments/{key}"},
	{"GET", "/api/environments/{env_id}/change-requests"},
	{"POST", "/api/environments/{env_id}/change-requests/{id}/approve"},
	{"POST", "/api/environments/{env_id}/change-requests/{id}/reject"},
	{"DELETE", "/api/environments/{env_id}/change-requests/{id}"},
	{"POST", "/api/environments/{env_id}/impressions"},
	{"GET", "/api/environments/{env_id}/impressions"},
	{"GET", "/api/environments/{env_id}/impressions/stats"},
	{"GET", "/api/environments/{env_id}/impressions/exposure"},
	{"GET", "/api/environments/{env_id}/impressions/export"},
	{"POST", "/api/environments/{env_id}/events"},
	{"GET", "/api/environments/{env_id}/events/keys"},
	{"GET", "/api/environments/{env_id}/events/export"},
	{"GET", "/api/environments/{env_id}/experiments"},
	{"GET", "/api/environments/{env_id}/experiments/{key}"},
	{"POST", "/api/environments/{env_id}/experiments"},
	{"PATCH", "/api/environments/{env_id}/experiments/{key}"},
	{"DELETE", "/api/environments/{env_id}/experiments/{key}"},
	{"GET", "/api/environments/{env_id}/experiments/{key}/results"},
	{"GET", "/api/environments/{env_id}/scheduled-changes"},
	{"GET", "/api/environments/{env_id}/flags/{key}/scheduled-changes"},
	{"POST", "/api/environments/{env_id}/flags/{key}/scheduled-changes"},
	{"DELETE", "/api/environments/{env_id}/scheduled-changes/{id}"},
	{"GET", "/api/environments/{env_id}/webhooks"},
	{"POST", "/api/environments/{env_id}/webhooks"},
	{"PATCH", "/api/environments/{env_id}/webhooks/{id}"},
	{"DELETE", "/api/environments/{env_id}/webhooks/{id}"},
	{"GET", "/api/environments/{env_id}/webhooks/{id}/deliveries"},
	{"GET", "/api/environments/{env_id}/integrations"},
	{"POST", "/api/environments/{env_id}/integrations"},
	{"PATCH", "/api/environments/{env_id}/integrations/{id}"},
	{"DELETE", "/api/environments/{env_id}/integrations/{id}"},
	{"POST", "/api/environments/{env_id}/integrations/{id}/test"},
	{"GET", "/api/environments/{env_id}/integrations/{id}/deliveries"},
	{"GET", "/api/environments/{env_id}/audit"},
	{"GET", "/api/audit"},
	{"GET", "/api/audit/export"},
	{"GET", "/api/audit/verify"},
	{"POST", "/api/environments/{env_id}/flags/{key}/releases"},
	{"GET", "/api/environments/{env_id}/releases"},
	{"GET", "/api/environments/{env_id}/releases/{id}"},
	{"GET", "/api/environments/{env_id}/releases/{id}/checks"},
	{"POST", "/api/environments/{env_id}/releases/{id}/pause"},
	{"POST", "/api/environments/{env_id}/releases/{id}/resume"},
	{"POST", "/api/environments/{env_id}/releases/{id}/rollback"},
	{"POST", "/api/environments/{env_id}/releases/{id}/cancel"},
	{"GET", "/api/tokens"},
	{"POST", "/api/tokens"},
	{"DELETE", "/api/tokens/{id}"},
	{"GET", "/api/workspace/scim-tokens"},
	{"POST", "/api/workspace/scim-tokens"},
	{"DELETE", "/api/workspace/scim-tokens/{id}"},
	{"GET", "/api/users"},
	{"POST", "/api/users"},
	{"DELETE", "/api/users/{id}"},
	{"GET", "/stream"},
	{"GET", "/flags/snapshot"},
	{"GET", "/scim/v2/ServiceProviderConfig"},
	{"GET", "/scim/v2/ResourceTypes"},
	{"GET", "/scim/v2/ResourceTypes/{id}"},
	{"GET", "/scim/v2/Schemas"},
	{"GET", "/scim/v2/Schemas/{id}"},
	{"GET", "/scim/v2/Users"},
	{"POST", "/scim/v2/Users"},
	{"GET", "/scim/v2/Users/{id}"},
	{"PUT", "/scim/v2/Users/{id}"},
	{"PATCH", "/scim/v2/Users/{id}"},
	{"DELETE", "/scim/v2/Users/{id}"},
	{"GET", "/scim/v2/Groups"},
	{"POST", "/scim/v2/Groups"},
	{"GET", "/scim/v2/Groups/{id}"},
	{"PUT", "/scim/v2/Groups/{id}"},
	{"PATCH", "/scim/v2/Groups/{id}"},
	{"DELETE", "/scim/v2/Groups/{id}"},
}

const someUUID = "6f1c2f7e-3b6d-4c1e-9a51-6f5d7c2b9e10"

var pathParam = regexp.MustCompile(`\{([a-z_]+)\}`)

// concrete fills a route's path parameters with well-formed values.
func concrete(path string) string {
	return pathParam.ReplaceAllStringFunc(path, func(p string) string {
		switch p {
		case "{project_id}", "{env_id}":
			return someUUID
		case "{key}":
			return "new-checkout"
		case "{user_id}":
			return "7"
		}
		return "" // {id}: filled per route below
	})
}

// Every route of the contract is served: none answers the router's
// "no such route" 404 or a 405.
func TestEveryContractRouteIsRouted(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	for _, r := range contractRoutes {
		path := concrete(r.path)
		if strings.Contains(r.path, "{id}") {
			id := "5"
			if strings.Contains(r.path, "scheduled-changes") || strings.Contains(r.path, "webhooks") || strings.Contains(r.path, "integrations") || strings.Contains(r.path, "releases") {
				id = someUUID
			}
			path = strings.Replace(concrete(strings.Replace(r.path, "{id}", "@", 1)), "@", id, 1)
		}
		req, err := http.NewRequest(r.method, s.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusMethodNotAllowed || bytes.Contains(body, []byte("no such route")) {
			t.Errorf("%s %s is not routed: %d %s", r.method, path, resp.StatusCode, body)
		}
		if resp.StatusCode >= 500 && resp.StatusCode != http.StatusNotImplemented {
			t.Errorf("%s %s answered %d %s", r.method, path, resp.StatusCode, body)
		}
	}
}

type errorBody struct {
	Error   string `json:"error"`
	Details []struct {
		Field   string `json:"field"`
		Message string `json:"message"`
	} `json:"details"`
}

// Requests are validated against the document before any handler: malformed
// JSON or a wrongly typed body is 400, a broken rule 422 naming the field,
// a malformed path identifier 404, an oversized body 413; never 500.
func TestRequestValidation(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, token := s.User(t, "admin@example.com", "admin")
	flags := "/api/environments/" + someUUID + "/flags"
	cases := []struct {
		name        string
		method      string
		path        string
		contentType string
		body        string
		wantStatus  int
		wantField   string // a details entry naming this field, when set
	}{
		{"malformed JSON", "POST", flags, "application/json", `{"key":`, 400, ""},
		{"body of the wrong JSON type", "POST", flags, "application/json", `[1,2]`, 400, ""},
		{"string body", "POST", flags, "application/json", `"flag"`, 400, ""},
		{"missing body", "POST", flags, "application/json", ``, 400, ""},
		{"wrong content type", "POST", flags, "text/plain", `{"key":"a","is_enabled":true}`, 400, ""},
		{"invalid flag key", "POST", flags, "application/json", `{"key":"bad key!","is_enabled":true}`, 422, "key"},
		{"flag key over 100 chars", "POST", flags, "application/json", `{"key":"` + strings.Repeat("k", 101) + `","is_enabled":true}`, 422, "key"},
		{"rollout above 100", "POST", flags, "application/json", `{"key":"a","is_enabled":true,"rollout_percentage":101}`, 422, "rollout_percentage"},
		{"rollout below 0", "POST", flags, "application/json", `{"key":"a","is_enabled":true,"rollout_percentage":-1}`, 422, "rollout_percentage"},
		{"missing required field", "POST", flags, "application/json", `{"key":"a"}`, 422, "is_enabled"},
		{"field of the wrong type", "POST", flags, "application/json", `{"key":"a","is_enabled":"yes"}`, 422, "is_enabled"},
		{"unknown flag type", "POST", flags, "application/json", `{"key":"a","is_enabled":true,"flag_type":"float"}`, 422, "flag_type"},
		{"unknown operator", "POST", flags, "application/json", `{"key":"a","is_enabled":true,"rules":[{"attribute":"plan","operator":"like","values":["x"]}]}`, 422, "rules.0.operator"},
		{"negative variant weight", "POST", flags, "application/json", `{"key":"a","is_enabled":true,"variants":[{"weight":-1,"value":"x"}]}`, 422, "variants.0.weight"},
		{"valid body reaches the handler (unknown environment)", "POST", flags, "application/json", `{"key":"a","is_enabled":true,"rollout_percentage":null,"default_value":null}`, 404, ""},
		{"malformed uuid in path", "GET", "/api/environments/not-a-uuid/flags", "", "", 404, ""},
		{"enum query parameter", "GET", "/api/environments/" + someUUID + "/change-requests?status=merged", "", "", 422, "status"},
		{"short password", "POST", "/api/users", "application/json", `{"name":"A","email":"a@example.com","role":"viewer","password":"short"}`, 422, "password"},
		{"invalid email", "POST", "/api/users", "application/json", `{"name":"A","email":"not-an-email","role":"viewer","password":"long enough"}`, 422, "email"},
		{"invalid environment slug", "POST", "/api/projects/" + someUUID + "/environments", "application/json", `{"name":"QA","slug":"Q A"}`, 422, "slug"},
		{"invalid colour", "POST", "/api/projects/" + someUUID + "/environments", "application/json", `{"name":"QA","slug":"qa","color":"red"}`, 422, "color"},
		{"token expiry out of range", "POST", "/api/tokens", "application/json", `{"name":"ci","scope":"read_only","expires_in_days":366}`, 422, "expires_in_days"},
		{"body over 1 MiB", "POST", flags, "application/json", `{"key":"a","is_enabled":true,"description":"` + strings.Repeat("x", 1<<20) + `"}`, 413, ""},
		{"unknown API route", "GET", "/api/nothing-here", "", "", 404, ""},
		{"unsupported method", "PUT", "/api/projects", "application/json", `{}`, 405, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			req := apptest.Request{Method: c.method, Path: c.path, Bearer: token, Header: map[string]string{}}
			if c.body != "" || c.contentType != "" {
				req.Body = c.body
			}
			if c.contentType != "" {
				req.Header["Content-Type"] = c.contentType
			}
			status, raw, resp := s.Do(t, req)
			if status != c.wantStatus {
				t.Fatalf("status = %d, want %d; body %s", status, c.wantStatus, raw)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q, want application/json", ct)
			}
			var body errorBody
			if err := json.Unmarshal(raw, &body); err != nil || body.Error == "" {
				t.Fatalf("error body %s is not {\"error\": ...}: %v", raw, err)
			}
			if c.wantField == "" {
				return
			}
			for _, d := range body.Details {
				if d.Field == c.wantField && d.Message != "" {
					return
				}
			}
			t.Errorf("details %+v do not name field %q", body.Details, c.wantField)
		})
	}
}
