package app_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/switchyard/switchyard/server/internal/apptest"
)

// scimBody is a SCIM response as the tests read it.
type scimBody = map[string]any

// scimToken creates a SCIM token as the workspace admin and returns it.
func scimToken(t *testing.T, s *apptest.Server, admin string) string {
	t.Helper()
	var created struct {
		Token  string `json:"token"`
		Prefix string `json:"prefix"`
	}
	must(t, s, admin, "POST", "/api/workspace/scim-tokens", map[string]string{"name": "identity provider"}, http.StatusCreated, &created)
	return created.Token
}

// scim sends one SCIM request with bearer and answers the status and the
// decoded body (nil when empty).
func scim(t *testing.T, s *apptest.Server, bearer, method, path string, body any) (int, scimBody) {
	t.Helper()
	status, raw, resp := s.Do(t, apptest.Request{Method: method, Path: path, Bearer: bearer, Body: body,
		Header: map[string]string{"Content-Type": "application/scim+json"}})
	if len(raw) == 0 {
		return status, nil
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/scim+json" {
		t.Errorf("%s %s: content type %q, want application/scim+json", method, path, ct)
	}
	var out scimBody
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s %s: decode %s: %v", method, path, raw, err)
	}
	return status, out
}

// scimMust is scim that fails the test unless the answer has status want.
func scimMust(t *testing.T, s *apptest.Server, bearer, method, path string, body any, want int) scimBody {
	t.Helper()
	status, out := scim(t, s, bearer, method, path, body)
	if status != want {
		t.Fatalf("%s %s = %d %v, want %d", method, path, status, out, want)
	}
	return out
}

// checkSCIMError checks a SCIM error body: the error schema, status as a
// string, and scimType when want names one.
func checkSCIMError(t *testing.T, body scimBody, status int, scimType string) {
	t.Helper()
	schemas, _ := body["schemas"].([]any)
	if len(schemas) != 1 || schemas[0] != "urn:ietf:params:scim:api:messages:2.0:Error" || body["status"] != itoa(int64(status)) {
		t.Errorf("error body %v, want the SCIM error schema and status %q", body, itoa(int64(status)))
	}
	if scimType != "" && body["scimType"] != scimType {
		t.Errorf("scimType = %v, want %s", body["scimType"], scimType)
	}
}

// oktaUser is the body Okta documents for creating a user.
func oktaUser(email string) map[string]any {
	return map[string]any{
		"schemas":     []string{"urn:ietf:params:scim:schemas:core:2.0:User"},
		"userName":    email,
		"name":        map[string]any{"givenName": "Ann", "familyName": "Lee"},
		"emails":      []map[string]any{{"primary": true, "value": email, "type": "work"}},
		"displayName": "Ann Lee",
		"locale":      "en-US",
		"externalId":  "00u1abcd",
		"groups":      []any{},
		"password":    "ignored-by-switchyard",
		"active":      true,
	}
}

// entraUser is the body Microsoft Entra ID documents for creating a user.
func entraUser(email string) map[string]any {
	return map[string]any{
		"schemas": []string{
			"urn:ietf:params:scim:schemas:core:2.0:User",
			"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User",
		},
		"externalId": "0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef",
		"userName":   email,
		"active":     true,
		"emails":     []map[string]any{{"primary": true, "type": "work", "value": email}},
		"meta":       map[string]any{"resourceType": "User"},
		"name":       map[string]any{"formatted": "givenName familyName", "familyName": "familyName", "givenName": "givenName"},
		"roles":      []any{},
		"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": map[string]any{"department": "Sales"},
	}
}

var scimTokenForm = regexp.MustCompile(`^scim_[0-9a-f]{64}$`)

// SCIM tokens are created, listed and revoked by workspace admins; a SCIM
// token works only under /scim/v2/, and nothing else works there.
func TestSCIMTokensAndScoping(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	adminID, admin := s.User(t, "admin@example.com", "admin")
	_, viewer := s.User(t, "viewer@example.com", "viewer")
	_ = adminID

	var created struct {
		ID     int64  `json:"id"`
		Token  string `json:"token"`
		Prefix string `json:"prefix"`
	}
	must(t, s, admin, "POST", "/api/workspace/scim-tokens", map[string]string{"name": "Okta"}, http.StatusCreated, &created)
	if !scimTokenForm.MatchString(created.Token) || !strings.HasPrefix(created.Token, created.Prefix) {
		t.Fatalf("token %q prefix %q, want scim_ and 64 hex digits", created.Token, created.Prefix)
	}
	var listed []map[string]any
	must(t, s, admin, "GET", "/api/workspace/scim-tokens", nil, http.StatusOK, &listed)
	if len(listed) != 1 || listed[0]["name"] != "Okta" || listed[0]["token"] != nil {
		t.Errorf("listed %v, want the one token without its value", listed)
	}
	for _, req := range []struct{ method, path string }{{"GET", "/api/workspace/scim-tokens"}, {"POST", "/api/workspace/scim-tokens"}} {
		if status, raw := call(t, s, viewer, req.method, req.path, map[string]string{"name": "x"}); status != http.StatusForbidden {
			t.Errorf("viewer %s %s = %d %s, want 403", req.method, req.path, status, raw)
		}
	}
	if status, raw := call(t, s, admin, "POST", "/api/workspace/scim-tokens", map[string]string{"name": " "}); status != http.StatusUnprocessableEntity {
		t.Errorf("blank name = %d %s, want 422", status, raw)
	}

	// The SCIM token answers 401 on every non-SCIM route.
	env := func() string { _, envs := s.DefaultProject(t); return envs["production"].String() }()
	for _, path := range []string{"/api/auth/me", "/api/users", "/api/projects", "/api/workspace/scim-tokens", "/api/environments/" + env + "/flags"} {
		if status, raw := call(t, s, created.Token, "GET", path, nil); status != http.StatusUnauthorized {
			t.Errorf("SCIM token on %s = %d %s, want 401", path, status, raw)
		}
	}
	if status, _, _ := s.Do(t, apptest.Request{Method: "GET", Path: "/flags/snapshot", Bearer: created.Token}); status != http.StatusUnauthorized {
		t.Errorf("SCIM token on /flags/snapshot = %d, want 401", status)
	}
	if c := openStream(t, s, "", map[string]string{"Authorization": "Bearer " + created.Token}); c.resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("SCIM token on /stream = %d, want 401", c.resp.StatusCode)
	}

	// Under /scim/v2/ only the SCIM token works.
	scimMust(t, s, created.Token, "GET", "/scim/v2/Users", nil, http.StatusOK)
	cookie := login(t, s, "admin@example.com", "password123").cookie
	for name, req := range map[string]apptest.Request{
		"personal access token": {Bearer: admin},
		"session cookie":        {Cookie: cookie},
		"nothing":               {},
		"an unknown SCIM token": {Bearer: "scim_" + strings.Repeat("0", 64)},
	} {
		req.Method, req.Path = "GET", "/scim/v2/Users"
		status, raw, _ := s.Do(t, req)
		var body scimBody
		_ = json.Unmarshal(raw, &body)
		if status != http.StatusUnauthorized {
			t.Errorf("%s on /scim/v2/Users = %d %s, want 401", name, status, raw)
		}
		checkSCIMError(t, body, http.StatusUnauthorized, "")
	}

	must(t, s, admin, "DELETE", "/api/workspace/scim-tokens/"+itoa(created.ID), nil, http.StatusNoContent, nil)
	if status, _ := scim(t, s, created.Token, "GET", "/scim/v2/Users", nil); status != http.StatusUnauthorized {
		t.Errorf("revoked SCIM token = %d, want 401", status)
	}
	if status, raw := call(t, s, admin, "DELETE", "/api/workspace/scim-tokens/"+itoa(created.ID), nil); status != http.StatusNotFound {
		t.Errorf("deleting it again = %d %s, want 404", status, raw)
	}
}

// The discovery resources answer with their schemas.
func TestSCIMDiscovery(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, admin := s.User(t, "admin@example.com", "admin")
	tok := scimToken(t, s, admin)
	cfg := scimMust(t, s, tok, "GET", "/scim/v2/ServiceProviderConfig", nil, http.StatusOK)
	if patch, _ := cfg["patch"].(map[string]any); patch["supported"] != true {
		t.Errorf("ServiceProviderConfig = %v, want patch supported", cfg)
	}
	types := scimMust(t, s, tok, "GET", "/scim/v2/ResourceTypes", nil, http.StatusOK)
	if types["totalResults"] != float64(2) {
		t.Errorf("ResourceTypes = %v", types)
	}
	scimMust(t, s, tok, "GET", "/scim/v2/ResourceTypes/User", nil, http.StatusOK)
	schemas := scimMust(t, s, tok, "GET", "/scim/v2/Schemas", nil, http.StatusOK)
	if schemas["totalResults"] != float64(2) {
		t.Errorf("Schemas = %v", schemas)
	}
	scimMust(t, s, tok, "GET", "/scim/v2/Schemas/urn:ietf:params:scim:schemas:core:2.0:User", nil, http.StatusOK)
	checkSCIMError(t, scimMust(t, s, tok, "GET", "/scim/v2/Schemas/nope", nil, http.StatusNotFound), 404, "")
}

// Okta's lifecycle: create, find by userName in another letter case, a
// duplicate refused, deactivate by a PATCH without path, reactivate by PUT,
// deprovision by DELETE.
func TestSCIMOktaUserLifecycle(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, admin := s.User(t, "admin@example.com", "admin")
	tok := scimToken(t, s, admin)

	u := scimMust(t, s, tok, "POST", "/scim/v2/Users", oktaUser("ann.lee@example.com"), http.StatusCreated)
	id, _ := u["id"].(string)
	name, _ := u["name"].(map[string]any)
	if id == "" || u["userName"] != "ann.lee@example.com" || u["active"] != true || u["displayName"] != "Ann Lee" ||
		u["externalId"] != "00u1abcd" || name["givenName"] != "Ann" || name["familyName"] != "Lee" {
		t.Fatalf("created %v", u)
	}
	// The user is a workspace viewer without a password.
	var users []map[string]any
	must(t, s, admin, "GET", "/api/users", nil, http.StatusOK, &users)
	found := false
	for _, x := range users {
		if x["email"] == "ann.lee@example.com" {
			found = x["role"] == "viewer" && x["active"] == true
		}
	}
	if !found {
		t.Errorf("users %v lack an active viewer ann.lee@example.com", users)
	}
	if r := login(t, s, "ann.lee@example.com", "ignored-by-switchyard"); r.status != http.StatusUnauthorized {
		t.Errorf("password login of a provisioned user = %d, want 401", r.status)
	}

	list := scimMust(t, s, tok, "GET", `/scim/v2/Users?filter=userName+eq+%22ANN.LEE%40example.com%22&startIndex=1&count=100`, nil, http.StatusOK)
	res, _ := list["Resources"].([]any)
	if list["totalResults"] != float64(1) || len(res) != 1 || res[0].(map[string]any)["id"] != id {
		t.Errorf("filter by userName = %v", list)
	}
	checkSCIMError(t, scimMust(t, s, tok, "POST", "/scim/v2/Users", oktaUser("Ann.Lee@Example.com"), http.StatusConflict), 409, "uniqueness")
	checkSCIMError(t, scimMust(t, s, tok, "POST", "/scim/v2/Users", oktaUser("admin@example.com"), http.StatusConflict), 409, "uniqueness")

	u = scimMust(t, s, tok, "PATCH", "/scim/v2/Users/"+id, map[string]any{
		"schemas":    []string{"urn:ietf:params:scim:api:messages:2.0:PatchOp"},
		"Operations": []any{map[string]any{"op": "replace", "value": map[string]any{"active": false}}},
	}, http.StatusOK)
	if u["active"] != false {
		t.Errorf("after deactivation %v", u)
	}
	put := oktaUser("ann.lee@example.com")
	put["id"], put["displayName"] = id, "Ann Lee-Smith"
	u = scimMust(t, s, tok, "PUT", "/scim/v2/Users/"+id, put, http.StatusOK)
	if u["active"] != true || u["displayName"] != "Ann Lee-Smith" {
		t.Errorf("after PUT %v", u)
	}

	// A membership, so that DELETE has one to remove.
	p := newProject(t, s, admin)
	s.Member(t, p.ID, mustInt(t, id), "editor")
	if status, _ := scim(t, s, tok, "DELETE", "/scim/v2/Users/"+id, nil); status != http.StatusNoContent {
		t.Fatalf("DELETE = %d, want 204", status)
	}
	checkSCIMError(t, scimMust(t, s, tok, "GET", "/scim/v2/Users/"+id, nil, http.StatusNotFound), 404, "")
	var members []map[string]any
	must(t, s, admin, "GET", "/api/projects/"+p.ID.String()+"/members", nil, http.StatusOK, &members)
	for _, m := range members {
		if m["email"] == "ann.lee@example.com" {
			t.Errorf("the deleted user is still a member: %v", m)
		}
	}
	must(t, s, admin, "GET", "/api/users", nil, http.StatusOK, &users)
	for _, x := range users {
		if x["email"] == "ann.lee@example.com" && x["active"] != false {
			t.Errorf("the deleted user's row %v, want it kept and deactivated", x)
		}
	}
	// Created again, the same user comes back.
	again := scimMust(t, s, tok, "POST", "/scim/v2/Users", oktaUser("ann.lee@example.com"), http.StatusCreated)
	if again["id"] != id || again["active"] != true {
		t.Errorf("re-created %v, want id %s and active", again, id)
	}
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	var n int64
	if err := json.Unmarshal([]byte(s), &n); err != nil {
		t.Fatalf("id %q: %v", s, err)
	}
	return n
}

// Microsoft Entra ID's PATCH forms: capitalised operation names, paths,
// booleans as strings, value paths on multi-valued attributes.
func TestSCIMEntraPatch(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, admin := s.User(t, "admin@example.com", "admin")
	tok := scimToken(t, s, admin)
	u := scimMust(t, s, tok, "POST", "/scim/v2/Users", entraUser("Test_User_1@contoso.com"), http.StatusCreated)
	id := u["id"].(string)
	if u["displayName"] != "givenName familyName" {
		t.Errorf("created %v, want the formatted name", u)
	}
	patch := func(ops ...map[string]any) scimBody {
		t.Helper()
		return scimMust(t, s, tok, "PATCH", "/scim/v2/Users/"+id, map[string]any{
			"schemas":    []string{"urn:ietf:params:scim:api:messages:2.0:PatchOp"},
			"Operations": ops,
		}, http.StatusOK)
	}
	u = patch(
		map[string]any{"op": "Add", "path": `emails[type eq "work"].value`, "value": "Test_User_1@contoso.com"},
		map[string]any{"op": "Replace", "path": "name.givenName", "value": "Jo"},
		map[string]any{"op": "Replace", "path": "name.familyName", "value": "Doe"},
		map[string]any{"op": "Add", "path": "externalId", "value": "ext-2"},
		map[string]any{"op": "Add", "path": "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department", "value": "Ops"},
	)
	if u["displayName"] != "Jo Doe" || u["externalId"] != "ext-2" {
		t.Errorf("after Entra adds %v", u)
	}
	u = patch(map[string]any{"op": "Replace", "path": "active", "value": "False"})
	if u["active"] != false {
		t.Errorf("after active False %v", u)
	}
	u = patch(map[string]any{"op": "replace", "path": "active", "value": "True"})
	if u["active"] != true {
		t.Errorf("after active True %v", u)
	}
	u = patch(map[string]any{"op": "Replace", "path": "userName", "value": "jo.doe@contoso.com"},
		map[string]any{"op": "Remove", "path": "externalId"})
	if u["userName"] != "jo.doe@contoso.com" || u["externalId"] != nil {
		t.Errorf("after rename %v", u)
	}
	for name, c := range map[string]struct {
		body     any
		scimType string
	}{
		"active not a boolean":  {map[string]any{"Operations": []any{map[string]any{"op": "Replace", "path": "active", "value": "maybe"}}}, "invalidValue"},
		"unknown op":            {map[string]any{"Operations": []any{map[string]any{"op": "move", "path": "active", "value": true}}}, "invalidValue"},
		"remove without a path": {map[string]any{"Operations": []any{map[string]any{"op": "remove"}}}, "noTarget"},
		"no Operations":         {map[string]any{"schemas": []string{}}, "invalidSyntax"},
		"broken value path":     {map[string]any{"Operations": []any{map[string]any{"op": "add", "path": `emails[type eq work].value`, "value": "x"}}}, "invalidPath"},
		"a string body":         {`"x"`, "invalidSyntax"},
		"a null body":           {`null`, "invalidSyntax"},
	} {
		status, body := scim(t, s, tok, "PATCH", "/scim/v2/Users/"+id, c.body)
		if status != http.StatusBadRequest {
			t.Errorf("%s = %d %v, want 400", name, status, body)
		}
		checkSCIMError(t, body, http.StatusBadRequest, c.scimType)
	}
	for _, body := range []string{`null`, `42`, `"x"`, `true`, `[]`} {
		status, out := scim(t, s, tok, "POST", "/scim/v2/Users", body)
		if status != http.StatusBadRequest {
			t.Errorf("POST %s = %d %v, want 400", body, status, out)
		}
	}
	checkSCIMError(t, scimMust(t, s, tok, "PATCH", "/scim/v2/Users/999999", map[string]any{"Operations": []any{}}, http.StatusNotFound), 404, "")
}

// Filters and paging: userName eq in any case, startIndex and count, and
// 400 invalidFilter for anything else.
func TestSCIMFiltersAndPaging(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, admin := s.User(t, "admin@example.com", "admin")
	tok := scimToken(t, s, admin)
	for _, e := range []string{"a@example.com", "b@example.com", "c@example.com"} {
		scimMust(t, s, tok, "POST", "/scim/v2/Users", oktaUser(e), http.StatusCreated)
	}
	// Four users in all: the admin and the three.
	page := func(q string) (total float64, names []string) {
		t.Helper()
		l := scimMust(t, s, tok, "GET", "/scim/v2/Users"+q, nil, http.StatusOK)
		for _, r := range l["Resources"].([]any) {
			names = append(names, r.(map[string]any)["userName"].(string))
		}
		if int(l["itemsPerPage"].(float64)) != len(names) {
			t.Errorf("%s: itemsPerPage %v for %d resources", q, l["itemsPerPage"], len(names))
		}
		return l["totalResults"].(float64), names
	}
	if total, names := page("?startIndex=2&count=2"); total != 4 || strings.Join(names, ",") != "a@example.com,b@example.com" {
		t.Errorf("page 2..3 = %v %v", total, names)
	}
	if total, names := page("?startIndex=4&count=10"); total != 4 || strings.Join(names, ",") != "c@example.com" {
		t.Errorf("page 4.. = %v %v", total, names)
	}
	if total, names := page("?count=0"); total != 4 || len(names) != 0 {
		t.Errorf("count 0 = %v %v", total, names)
	}
	if total, names := page(`?filter=USERNAME+EQ+%22B%40EXAMPLE.COM%22`); total != 1 || strings.Join(names, ",") != "b@example.com" {
		t.Errorf("filter = %v %v", total, names)
	}
	if total, names := page(`?filter=userName+eq+%22nobody%40example.com%22`); total != 0 || len(names) != 0 {
		t.Errorf("filter of nobody = %v %v", total, names)
	}
	for _, f := range []string{`userName+co+%22a%22`, `title+eq+%22x%22`, `userName+eq+a`, `userName+eq+%22a%22+and+active+eq+true`, `%28%29`} {
		status, body := scim(t, s, tok, "GET", "/scim/v2/Users?filter="+f, nil)
		if status != http.StatusBadRequest {
			t.Errorf("filter %s = %d %v, want 400", f, status, body)
		}
		checkSCIMError(t, body, http.StatusBadRequest, "invalidFilter")
	}
}

// Deactivating through SCIM on A ends the user's session and stream on B at
// once, as the admin route does.
func TestSCIMDeactivationEndsEverythingEverywhere(t *testing.T) {
	t.Parallel()
	a, b := twoInstances(t)
	_, admin := a.User(t, "admin@example.com", "admin")
	tok := scimToken(t, a, admin)
	email := uniq("scim") + "@example.com"
	id, token := a.User(t, email, "editor")
	cookie := login(t, a, email, "password123").cookie
	if cookie == nil {
		t.Fatal("no session cookie")
	}
	me := func(s *apptest.Server, req apptest.Request) int {
		req.Method, req.Path = "GET", "/api/auth/me"
		status, _, _ := s.Do(t, req)
		return status
	}
	stream := openStream(t, b, "", map[string]string{"Cookie": cookie.Name + "=" + cookie.Value})
	if ev := stream.next(t); ev.Name != "connected" {
		t.Fatalf("stream on B began with %+v", ev)
	}
	if got := me(b, apptest.Request{Cookie: cookie}); got != http.StatusOK {
		t.Fatalf("session on B before = %d", got)
	}

	u := scimMust(t, a, tok, "PATCH", "/scim/v2/Users/"+itoa(id), map[string]any{
		"Operations": []any{map[string]any{"op": "Replace", "path": "active", "value": "False"}},
	}, http.StatusOK)
	if u["active"] != false {
		t.Fatalf("after deactivation %v", u)
	}
	for name, s := range map[string]*apptest.Server{"B": b, "A": a} {
		for cred, req := range map[string]apptest.Request{"token": {Bearer: token}, "session": {Cookie: cookie}} {
			if got := me(s, req); got != http.StatusUnauthorized {
				t.Errorf("%s on %s after SCIM deactivation = %d, want 401", cred, name, got)
			}
		}
	}
	stream.ended(t)
}

// Groups as Okta and Microsoft Entra ID push them: created with members,
// found by displayName in any case, renamed, members added and removed by
// value array and by a members[value eq "…"] path, replaced, deleted.
func TestSCIMGroups(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, admin := s.User(t, "admin@example.com", "admin")
	tok := scimToken(t, s, admin)
	var ids []string
	for _, e := range []string{"g1@example.com", "g2@example.com", "g3@example.com"} {
		ids = append(ids, scimMust(t, s, tok, "POST", "/scim/v2/Users", oktaUser(e), http.StatusCreated)["id"].(string))
	}
	memberValues := func(g scimBody) string {
		t.Helper()
		ms, _ := g["members"].([]any)
		var vs []string
		for _, m := range ms {
			vs = append(vs, m.(map[string]any)["value"].(string))
		}
		return strings.Join(vs, ",")
	}
	g := scimMust(t, s, tok, "POST", "/scim/v2/Groups", map[string]any{
		"schemas":     []string{"urn:ietf:params:scim:schemas:core:2.0:Group"},
		"displayName": "Sales",
		"members":     []map[string]any{{"value": ids[0], "display": "g1@example.com"}},
	}, http.StatusCreated)
	gid, _ := g["id"].(string)
	if gid == "" || g["displayName"] != "Sales" || memberValues(g) != ids[0] {
		t.Fatalf("created %v", g)
	}
	checkSCIMError(t, scimMust(t, s, tok, "POST", "/scim/v2/Groups", map[string]any{"displayName": "SALES"}, http.StatusConflict), 409, "uniqueness")
	checkSCIMError(t, scimMust(t, s, tok, "POST", "/scim/v2/Groups", map[string]any{"displayName": "Other", "members": []map[string]any{{"value": "424242"}}}, http.StatusBadRequest), 400, "invalidValue")
	checkSCIMError(t, scimMust(t, s, tok, "GET", `/scim/v2/Groups?filter=members+eq+%22x%22`, nil, http.StatusBadRequest), 400, "invalidFilter")

	list := scimMust(t, s, tok, "GET", `/scim/v2/Groups?filter=displayName+eq+%22sales%22&excludedAttributes=members`, nil, http.StatusOK)
	res, _ := list["Resources"].([]any)
	if list["totalResults"] != float64(1) || len(res) != 1 || res[0].(map[string]any)["id"] != gid || res[0].(map[string]any)["members"] != nil {
		t.Errorf("filter by displayName without members = %v", list)
	}

	patch := func(ops ...map[string]any) scimBody {
		t.Helper()
		return scimMust(t, s, tok, "PATCH", "/scim/v2/Groups/"+gid, map[string]any{
			"schemas":    []string{"urn:ietf:params:scim:api:messages:2.0:PatchOp"},
			"Operations": ops,
		}, http.StatusOK)
	}
	// Okta: rename without a path (with the id in the value), add members by path.
	g = patch(map[string]any{"op": "replace", "value": map[string]any{"id": gid, "displayName": "Sales EMEA"}})
	if g["displayName"] != "Sales EMEA" || memberValues(g) != ids[0] {
		t.Errorf("after rename %v", g)
	}
	g = patch(map[string]any{"op": "add", "path": "members", "value": []map[string]any{{"value": ids[1], "display": "g2"}, {"value": ids[2]}}})
	if memberValues(g) != strings.Join(ids, ",") {
		t.Errorf("after add %v", g)
	}
	// Okta removes one by a value path; Entra removes by a value array.
	g = patch(map[string]any{"op": "remove", "path": `members[value eq "` + ids[0] + `"]`})
	if memberValues(g) != ids[1]+","+ids[2] {
		t.Errorf("after remove by path %v", g)
	}
	g = patch(map[string]any{"op": "Remove", "path": "members", "value": []map[string]any{{"value": ids[1]}}})
	if memberValues(g) != ids[2] {
		t.Errorf("after Entra remove %v", g)
	}
	g = patch(map[string]any{"op": "Replace", "path": "members", "value": []map[string]any{{"value": ids[0]}}},
		map[string]any{"op": "Add", "path": "externalId", "value": "ext-g"})
	if memberValues(g) != ids[0] || g["externalId"] != "ext-g" {
		t.Errorf("after replace %v", g)
	}
	g = scimMust(t, s, tok, "PUT", "/scim/v2/Groups/"+gid, map[string]any{
		"schemas": []string{"urn:ietf:params:scim:schemas:core:2.0:Group"}, "displayName": "Sales", "members": []map[string]any{{"value": ids[1]}},
	}, http.StatusOK)
	if g["displayName"] != "Sales" || memberValues(g) != ids[1] {
		t.Errorf("after PUT %v", g)
	}
	// Deprovisioning a user takes them out of their groups.
	if status, _ := scim(t, s, tok, "DELETE", "/scim/v2/Users/"+ids[1], nil); status != http.StatusNoContent {
		t.Fatalf("DELETE user = %d", status)
	}
	if g = scimMust(t, s, tok, "GET", "/scim/v2/Groups/"+gid, nil, http.StatusOK); memberValues(g) != "" {
		t.Errorf("after deprovisioning its member %v", g)
	}
	if status, _ := scim(t, s, tok, "DELETE", "/scim/v2/Groups/"+gid, nil); status != http.StatusNoContent {
		t.Fatalf("DELETE group = %d", status)
	}
	checkSCIMError(t, scimMust(t, s, tok, "GET", "/scim/v2/Groups/"+gid, nil, http.StatusNotFound), 404, "")
	checkSCIMError(t, scimMust(t, s, tok, "DELETE", "/scim/v2/Groups/"+gid, nil, http.StatusNotFound), 404, "")
	scimMust(t, s, tok, "GET", "/scim/v2/Users/"+ids[0], nil, http.StatusOK)
}
