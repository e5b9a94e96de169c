package providertest

import (
	"context"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	ofrep "github.com/open-feature/go-sdk-contrib/providers/ofrep"
	"github.com/open-feature/go-sdk/openfeature"

	"github.com/switchyard/switchyard/server/internal/apptest"
)

// arrange starts an instance with a project whose staging environment holds
// one client-side flag of each type, and returns it with a client key.
func arrange(t *testing.T) (s *apptest.Server, admin string, projectID, env uuid.UUID, key string, keyID int64) {
	t.Helper()
	s = apptest.Start(t, nil)
	_, admin = s.User(t, "admin@example.com", "admin")
	projectID, envs := s.DefaultProject(t)
	env = envs["staging"]
	flags := "/api/environments/" + env.String() + "/flags"
	for _, f := range []map[string]any{
		{"key": "beta", "is_enabled": true, "client_side": true, "rollout_percentage": 0,
			"rules": []map[string]any{{"attribute": "plan", "operator": "equals", "values": []string{"pro"}}}},
		{"key": "greeting", "is_enabled": true, "flag_type": "string", "default_value": "hello", "client_side": true,
			"rules": []map[string]any{{"attribute": "country", "operator": "equals", "values": []string{"DE"}, "variant": "hallo"}}},
		{"key": "limit", "is_enabled": true, "flag_type": "integer", "default_value": 10, "client_side": true,
			"rules": []map[string]any{{"attribute": "plan", "operator": "equals", "values": []string{"pro"}, "variant": 100}}},
		{"key": "layout", "is_enabled": true, "flag_type": "json", "default_value": map[string]any{"cols": 3}, "client_side": true},
		{"key": "hidden", "is_enabled": true},
	} {
		if status, raw, _ := s.Do(t, apptest.Request{Method: "POST", Path: flags, Bearer: admin, Body: f}); status != http.StatusOK {
			t.Fatalf("create flag: %d %s", status, raw)
		}
	}
	var k struct {
		ID  int64  `json:"id"`
		Key string `json:"key"`
	}
	status, raw, _ := s.Do(t, apptest.Request{Method: "POST", Path: "/api/projects/" + projectID.String() + "/keys", Bearer: admin,
		Body: map[string]any{"name": "browser", "environment_id": env, "kind": "client"}})
	if status != http.StatusOK {
		t.Fatalf("create client key: %d %s", status, raw)
	}
	if err := jsonUnmarshal(raw, &k); err != nil {
		t.Fatal(err)
	}
	return s, admin, projectID, env, k.Key, k.ID
}

// The official Go provider, given only the base URL and a key, reads all
// four flag types with targeting, a missing flag and a hidden flag as the
// caller's default with FLAG_NOT_FOUND, and nothing once the key is revoked.
func TestOfficialGoProvider(t *testing.T) {
	s, admin, projectID, _, key, keyID := arrange(t)
	domain := t.Name()
	if err := openfeature.SetNamedProviderAndWait(domain, ofrep.NewProvider(s.URL, ofrep.WithBearerToken(key))); err != nil {
		t.Fatal(err)
	}
	c := openfeature.NewClient(domain)
	ctx := context.Background()
	pro := openfeature.NewEvaluationContext("ada", map[string]any{"plan": "pro", "country": "DE"})
	free := openfeature.NewEvaluationContext("bob", map[string]any{"plan": "free", "country": "FR"})

	type outcome struct {
		Value  any
		Reason openfeature.Reason
		Code   openfeature.ErrorCode
	}
	check := func(name string, want outcome, got outcome) {
		t.Helper()
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", name, d)
		}
	}
	b, _ := c.BooleanValueDetails(ctx, "beta", false, pro)
	check("beta for a pro user", outcome{true, openfeature.TargetingMatchReason, ""}, outcome{b.Value, b.Reason, b.ErrorCode})
	b, _ = c.BooleanValueDetails(ctx, "beta", true, free)
	check("beta outside the rollout", outcome{false, openfeature.SplitReason, ""}, outcome{b.Value, b.Reason, b.ErrorCode})
	str, _ := c.StringValueDetails(ctx, "greeting", "x", pro)
	check("greeting in DE", outcome{"hallo", openfeature.TargetingMatchReason, ""}, outcome{str.Value, str.Reason, str.ErrorCode})
	str, _ = c.StringValueDetails(ctx, "greeting", "x", free)
	check("greeting elsewhere", outcome{"hello", openfeature.DefaultReason, ""}, outcome{str.Value, str.Reason, str.ErrorCode})
	i, _ := c.IntValueDetails(ctx, "limit", 1, pro)
	check("limit for pro", outcome{int64(100), openfeature.TargetingMatchReason, ""}, outcome{i.Value, i.Reason, i.ErrorCode})
	o, _ := c.ObjectValueDetails(ctx, "layout", nil, free)
	check("layout", outcome{map[string]any{"cols": 3.0}, openfeature.DefaultReason, ""}, outcome{o.Value, o.Reason, o.ErrorCode})

	for _, flag := range []string{"no-such-flag", "hidden"} {
		b, _ = c.BooleanValueDetails(ctx, flag, true, pro)
		check(flag, outcome{true, openfeature.ErrorReason, openfeature.FlagNotFoundCode}, outcome{b.Value, b.Reason, b.ErrorCode})
	}

	if status, raw, _ := s.Do(t, apptest.Request{Method: "DELETE", Path: "/api/projects/" + projectID.String() + "/keys/" + itoa(keyID), Bearer: admin}); status != http.StatusNoContent {
		t.Fatalf("revoke: %d %s", status, raw)
	}
	b, err := c.BooleanValueDetails(ctx, "beta", false, pro)
	if err == nil || b.Value != false || b.Reason != openfeature.ErrorReason {
		t.Errorf("with a revoked key = %+v, %v; want the default with an error", b, err)
	}
}
