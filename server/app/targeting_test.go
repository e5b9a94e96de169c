package app_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/switchyard/switchyard/sdkgo/eval"
	"github.com/switchyard/switchyard/server/internal/apptest"
)

type anyMap = map[string]any

func cond(attr, op string, values ...string) anyMap {
	return anyMap{"attribute": attr, "operator": op, "values": values}
}

// docs/reference/evaluation.md, Rule validation: bad conditions, operators,
// values, rule rollouts and rule splits are refused at write time with the
// field's path; the schema (operator enum, minItems, bounds) and core (values
// the evaluator's parsers refuse, rules without a condition, splits) share the
// work.
func TestTargetingValidation(t *testing.T) {
	t.Parallel()
	fe := newFlagEnv(t)
	base := fe.flags("production")
	segments := "/api/environments/" + fe.envs["production"] + "/segments"
	if status, body := fe.call(t, "POST", segments, anyMap{"key": "beta", "name": "Beta", "rules": []any{cond("plan", "equals", "pro")}}); status != 201 && status != 200 {
		t.Fatalf("create segment = %d %v", status, body)
	}
	str := func(rules ...any) anyMap {
		return anyMap{"key": "f", "is_enabled": true, "flag_type": "string", "default_value": "a", "rules": rules}
	}
	cases := []struct {
		name  string
		path  string
		body  anyMap
		field string
	}{
		{"rule without any condition", base, str(anyMap{"variant": "b"}), "rules.0"},
		{"empty conditions", base, str(anyMap{"conditions": []any{}, "variant": "b"}), "rules.0.conditions"},
		{"unknown operator in a condition", base, str(anyMap{"conditions": []any{cond("a", "like", "x")}}), "rules.0.conditions.0.operator"},
		{"condition without values", base, str(anyMap{"conditions": []any{cond("a", "equals")}}), "rules.0.conditions.0.values"},
		{"condition without attribute", base, str(anyMap{"conditions": []any{cond("", "equals", "x")}}), "rules.0.conditions.0.attribute"},
		{"bad regex", base, str(cond("a", "equals", "x"), anyMap{"conditions": []any{cond("email", "regex", "^a", "(")}}), "rules.1.conditions.0.values.1"},
		{"bad semver", base, str(anyMap{"conditions": []any{cond("v", "semver_greater_than", "1.2.3", "1.2", "v2.0.0")}}), "rules.0.conditions.0.values.1"},
		{"bad semver at the top level", base, str(cond("v", "semver_equals", "V1.0.0")), "rules.0.values.0"},
		{"bad instant", base, str(anyMap{"conditions": []any{cond("signup", "after", "2026-03-01")}}), "rules.0.conditions.0.values.0"},
		{"rule rollout above 100", base, str(anyMap{"conditions": []any{cond("a", "equals", "x")}, "rollout_percentage": 101}), "rules.0.rollout_percentage"},
		{"rule rollout below 0", base, str(anyMap{"conditions": []any{cond("a", "equals", "x")}, "rollout_percentage": -1}), "rules.0.rollout_percentage"},
		{"rule variants with a negative weight", base, str(anyMap{"conditions": []any{cond("a", "equals", "x")}, "variants": []any{anyMap{"weight": -1, "value": "b"}, anyMap{"weight": 2, "value": "c"}}}), "rules.0.variants.0.weight"},
		{"rule variants of zero total", base, str(anyMap{"conditions": []any{cond("a", "equals", "x")}, "variants": []any{anyMap{"weight": 0, "value": "b"}}}), "rules.0.variants"},
		{"rule variants of the wrong type", base, str(anyMap{"conditions": []any{cond("a", "equals", "x")}, "variants": []any{anyMap{"weight": 1, "value": 3}}}), "rules.0.variants.0.value"},
		{"rule variants with variant", base, str(anyMap{"conditions": []any{cond("a", "equals", "x")}, "variant": "b", "variants": []any{anyMap{"weight": 1, "value": "c"}}}), "rules.0.variants"},
		{"rule variants on a boolean flag", base, anyMap{"key": "f", "is_enabled": true, "rules": []any{anyMap{"conditions": []any{cond("a", "equals", "x")}, "variants": []any{anyMap{"weight": 1, "value": true}}}}}, "rules.0.variants"},
		{"segment rule with a rollout", segments, anyMap{"key": "s", "name": "S", "rules": []any{anyMap{"attribute": "a", "operator": "equals", "values": []string{"x"}, "rollout_percentage": 50}}}, "rules.0.rollout_percentage"},
		{"segment rule with variants", segments, anyMap{"key": "s", "name": "S", "rules": []any{anyMap{"attribute": "a", "operator": "equals", "values": []string{"x"}, "variants": []any{anyMap{"weight": 1, "value": "b"}}}}}, "rules.0.variants"},
		{"segment rule with a bad regex", segments, anyMap{"key": "s", "name": "S", "rules": []any{anyMap{"conditions": []any{cond("email", "regex", "[")}}}}, "rules.0.conditions.0.values.0"},
		{"segment rule without any condition", segments, anyMap{"key": "s", "name": "S", "rules": []any{anyMap{}}}, "rules.0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, body := fe.call(t, "POST", c.path, c.body)
			if status != 422 || !detailsName(body, c.field) {
				t.Errorf("= %d %v, want 422 naming %s", status, body, c.field)
			}
		})
	}
	// The same checks hold for a merge patch, which the schema sees only in part.
	if status, body := fe.call(t, "POST", base, str(cond("a", "equals", "x"))); status != 200 {
		t.Fatalf("create = %d %v", status, body)
	}
	if status, body := fe.call(t, "PATCH", base+"/f", anyMap{"rules": []any{anyMap{"conditions": []any{cond("v", "semver_less_than", "1.x")}}}}); status != 422 || !detailsName(body, "rules.0.conditions.0.values.0") {
		t.Errorf("patch with a bad version = %d %v, want 422 naming rules.0.conditions.0.values.0", status, body)
	}
	// Valid: conditions only, a segment with conditions, a rule split, a rule rollout.
	ok := str(
		anyMap{"conditions": []any{cond("country", "not_in", "DE", "FR"), cond("v", "semver_greater_than_or_equal", "v2.4.0")}, "rollout_percentage": 0},
		anyMap{"segment_key": "beta", "conditions": []any{cond("signup", "after", "2026-03-01T00:00:00Z")}, "variants": []any{anyMap{"weight": 0, "value": "b"}, anyMap{"weight": 1, "value": "c"}}},
		anyMap{"segment_key": "beta", "rollout_percentage": 100, "variants": []any{}},
	)
	if status, body := fe.call(t, "POST", base, ok); status != 200 {
		t.Errorf("valid extended rules = %d %v, want 200", status, body)
	}
}

// extendedRules are rules with every new construct, written in the field
// order the server encodes (eval.Rule), compact, so that "comes back as
// written" can be checked byte for byte. The second rule has no top-level
// condition: its values come back as [] (absent or [] are the same,
// docs/reference/evaluation.md, Wire form), so it is written as [].
const extendedRules = `[` +
	`{"attribute":"country","operator":"not_in","values":["DE","FR"],"conditions":[{"attribute":"version","operator":"semver_greater_than_or_equal","values":["v2.4.0"]},{"attribute":"signup","operator":"after","values":["2026-03-01T00:00:00Z"]}],"rollout_percentage":100,"variants":[{"weight":1,"value":"arm-a"},{"weight":1,"value":"arm-b"}]},` +
	`{"values":[],"segment_key":"beta","variant":"beta","conditions":[{"attribute":"country","operator":"equals","values":["NL"]}],"rollout_percentage":50},` +
	`{"attribute":"plan","operator":"equals","values":["free"],"variant":"free"}` +
	`]`

// docs/reference/evaluation.md, Wire form and Segment expansion: a flag with
// conditions, a rule rollout and a rule split round-trips byte for byte through
// the API and promotion, reaches the stream and the snapshot segment-expanded,
// and evaluates through OFREP to the value the one evaluator gives on the
// snapshot.
func TestTargetingRoundTripAndEvaluation(t *testing.T) {
	t.Parallel()
	fe := newFlagEnv(t)
	prod := fe.envs["production"]
	segment := anyMap{"key": "beta", "name": "Beta", "rules": []any{
		cond("plan", "equals", "pro", "team"),
		anyMap{"conditions": []any{cond("email", "regex", `@acme\.(io|dev)$`)}, "variant": "acme"},
	}}
	for _, env := range []string{"production", "staging"} {
		if status, body := fe.call(t, "POST", "/api/environments/"+fe.envs[env]+"/segments", segment); status != 200 {
			t.Fatalf("create segment in %s = %d %v", env, status, body)
		}
	}
	flag := `{"key":"checkout","is_enabled":true,"flag_type":"string","default_value":"control","rules":` + extendedRules + `}`
	if status, raw, _ := fe.s.Do(t, apptest.Request{Method: "POST", Path: fe.flags("production"), Bearer: fe.token, Body: flag}); status != 200 {
		t.Fatalf("create = %d %s", status, raw)
	}
	rulesOf := func(raw []byte) string {
		t.Helper()
		var f struct{ Rules json.RawMessage }
		if err := json.Unmarshal(raw, &f); err != nil {
			t.Fatalf("flag %s: %v", raw, err)
		}
		return string(f.Rules)
	}
	for _, env := range []string{"production", "staging"} {
		if env == "staging" {
			if status, body := fe.call(t, "POST", fe.flags("production")+"/checkout/promote", anyMap{"target_env_id": fe.envs["staging"]}); status != 200 {
				t.Fatalf("promote = %d %v", status, body)
			}
		}
		status, raw, _ := fe.s.Do(t, apptest.Request{Method: "GET", Path: fe.flags(env) + "/checkout", Bearer: fe.token})
		if status != 200 {
			t.Fatalf("GET in %s = %d %s", env, status, raw)
		}
		if got := rulesOf(raw); got != extendedRules {
			t.Errorf("rules read back in %s:\n got %s\nwant %s", env, got, extendedRules)
		}
	}

	// The snapshot and the stream carry the segment expanded: the segment's
	// two rules under the referencing rule's condition and rollout.
	key := fe.s.SDKKey(t, uuid.MustParse(prod))
	status, raw, _ := fe.s.Do(t, apptest.Request{Method: "GET", Path: "/flags/snapshot", Bearer: key})
	if status != 200 {
		t.Fatalf("snapshot = %d %s", status, raw)
	}
	var flags []eval.Flag
	if err := json.Unmarshal(raw, &flags); err != nil {
		t.Fatal(err)
	}
	if len(flags) != 1 {
		t.Fatalf("snapshot has %d flags, want 1", len(flags))
	}
	wantExpanded := `[` +
		`{"attribute":"country","operator":"not_in","values":["DE","FR"],"conditions":[{"attribute":"version","operator":"semver_greater_than_or_equal","values":["v2.4.0"]},{"attribute":"signup","operator":"after","values":["2026-03-01T00:00:00Z"]}],"rollout_percentage":100,"variants":[{"weight":1,"value":"arm-a"},{"weight":1,"value":"arm-b"}]},` +
		`{"attribute":"plan","operator":"equals","values":["pro","team"],"variant":"beta","conditions":[{"attribute":"country","operator":"equals","values":["NL"]}],"rollout_percentage":50},` +
		`{"values":[],"variant":"acme","conditions":[{"attribute":"email","operator":"regex","values":["@acme\\.(io|dev)$"]},{"attribute":"country","operator":"equals","values":["NL"]}],"rollout_percentage":50},` +
		`{"attribute":"plan","operator":"equals","values":["free"],"variant":"free"}` +
		`]`
	snapRules, _ := json.Marshal(flags[0].Rules)
	if string(snapRules) != wantExpanded {
		t.Errorf("snapshot rules:\n got %s\nwant %s", snapRules, wantExpanded)
	}
	c := openStream(t, fe.s, "", map[string]string{"Authorization": "Bearer " + key})
	if ev := c.next(t); ev.Name != "connected" {
		t.Fatalf("first event = %+v", ev)
	}
	var update struct{ Flag json.RawMessage }
	if err := json.Unmarshal([]byte(c.next(t).Data), &update); err != nil {
		t.Fatal(err)
	}
	if got := rulesOf(update.Flag); got != wantExpanded {
		t.Errorf("stream rules:\n got %s\nwant %s", got, wantExpanded)
	}

	// OFREP (server key) answers what the evaluator answers on the snapshot,
	// for users that reach every rule and none.
	snap := eval.Compile(flags)
	seen := map[string]int{}
	for i := range 40 {
		attrs := []map[string]any{
			{"country": "US", "version": "2.10.0", "signup": "2026-04-01T10:00:00+02:00"},
			{"country": "NL", "plan": "team"},
			{"country": "NL", "email": fmt.Sprintf("u%d@acme.dev", i)},
			{"country": "NL", "plan": "free"},
			{"country": "DE", "version": "2.10.0", "signup": "2026-04-01T10:00:00Z"},
		}[i%5]
		user := fmt.Sprintf("user-%d", i)
		want := snap.Evaluate("checkout", user, attrs)
		status, raw, _ := fe.s.Do(t, apptest.Request{Method: "POST", Path: "/ofrep/v1/evaluate/flags/checkout", Bearer: key, Body: ctxOf(user, attrs)})
		if status != 200 {
			t.Fatalf("OFREP %s = %d %s", user, status, raw)
		}
		var got struct{ Value any }
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want.Value, got.Value); d != "" {
			t.Errorf("OFREP for %s %v (-evaluator +OFREP):\n%s", user, attrs, d)
		}
		if v, ok := want.Value.(string); ok {
			seen[v]++
		}
	}
	// The users were chosen to reach every rule, the rollout's both sides and both arms.
	for _, v := range []string{"arm-a", "arm-b", "beta", "acme", "free", "control"} {
		if seen[v] == 0 {
			t.Errorf("no user got %q (%v): the test does not reach every rule", v, seen)
		}
	}
}

// docs/reference/evaluation.md, Wire form: change requests and scheduled
// changes carry the new rule fields unchanged (both apply the patch through the
// one merge-patch path).
func TestTargetingThroughChangeRequestAndSchedule(t *testing.T) {
	t.Parallel()
	// A boolean flag's rules: conditions and a rule rollout, no split.
	const rules = `[{"values":[],"conditions":[{"attribute":"version","operator":"semver_less_than","values":["3.0.0-rc.1"]}],"rollout_percentage":25},` +
		`{"attribute":"email","operator":"not_contains","values":["@example.com"],"conditions":[{"attribute":"signup","operator":"before","values":["1767225600000"]}]}]`
	rulesAt := func(t *testing.T, fe *flagEnv, key string) string {
		t.Helper()
		status, raw, _ := fe.s.Do(t, apptest.Request{Method: "GET", Path: fe.flags("production") + "/" + key, Bearer: fe.token})
		var f struct{ Rules json.RawMessage }
		if err := json.Unmarshal(raw, &f); status != 200 || err != nil {
			t.Fatalf("GET %s = %d %s", key, status, raw)
		}
		return string(f.Rules)
	}

	t.Run("change request", func(t *testing.T) {
		t.Parallel()
		ce := newCREnv(t)
		status, raw, _ := ce.s.Do(t, apptest.Request{Method: "PATCH", Path: ce.flags("production") + "/gate", Bearer: ce.editorA, Body: `{"rules":` + rules + `}`})
		var cr struct{ ID int64 }
		if err := json.Unmarshal(raw, &cr); status != 202 || err != nil {
			t.Fatalf("patch under approval = %d %s", status, raw)
		}
		if status, body := ce.call(t, "POST", ce.cr(fmt.Sprint(cr.ID))+"/approve", nil, ce.editorB); status != 200 {
			t.Fatalf("approve = %d %v", status, body)
		}
		if got := rulesAt(t, ce.flagEnv, "gate"); got != rules {
			t.Errorf("rules after approval:\n got %s\nwant %s", got, rules)
		}
	})

	t.Run("scheduled change", func(t *testing.T) {
		t.Parallel()
		clock := apptest.NewClock(time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC))
		fe := newClockEnv(t, clock)
		fe.call(t, "POST", fe.flags("production"), anyMap{"key": "launch", "is_enabled": true})
		body := `{"scheduled_at":"` + clock.Now().Add(time.Hour).Format(time.RFC3339) + `","patch":{"rules":` + rules + `}}`
		if status, raw, _ := fe.s.Do(t, apptest.Request{Method: "POST", Path: fe.flags("production") + "/launch/scheduled-changes", Bearer: fe.token, Body: body}); status != 200 {
			t.Fatalf("schedule = %d %s", status, raw)
		}
		clock.Advance(61 * time.Minute)
		waitFor(t, "the scheduled change to run", func() bool { return rulesAt(t, fe, "launch") != "[]" })
		if got := rulesAt(t, fe, "launch"); got != rules {
			t.Errorf("rules after the scheduled change:\n got %s\nwant %s", got, rules)
		}
	})
}
