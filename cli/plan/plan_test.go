package plan_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard/switchyard/cli/flagfile"
	"github.com/switchyard/switchyard/cli/plan"
	"github.com/switchyard/switchyard/sdkgo/eval"
)

func load(t *testing.T, text string) *flagfile.File {
	t.Helper()
	f, ps := flagfile.Load([]byte(text), nil)
	if len(ps) > 0 {
		t.Fatalf("file: %s", ps.Format("test.yaml"))
	}
	return f
}

func pct(n int) *int { return &n }

func str(s string) *string { return &s }

// server is one project, checkout, with production (approval as given) and
// staging, holding flags and segments.
func server(approval bool, flags map[string]eval.Flag, segments map[string]plan.Segment, pending ...plan.ChangeRequest) plan.State {
	env := func(slug, name string, approval bool) *plan.Environment {
		return &plan.Environment{Slug: slug, Name: name, Color: "#ef4444", RequireApproval: approval,
			Flags: map[string]eval.Flag{}, Segments: map[string]plan.Segment{}}
	}
	prod := env("production", "Production", approval)
	for k, f := range flags {
		f.Key = k
		prod.Flags[k] = f
	}
	for k, s := range segments {
		s.Key = k
		prod.Segments[k] = s
	}
	prod.Pending = pending
	return plan.State{Projects: map[string]*plan.Project{"checkout": {Slug: "checkout", Name: "Checkout",
		Environments: map[string]*plan.Environment{"production": prod, "staging": env("staging", "Staging", false)}}}}
}

type step struct {
	Op       plan.Op
	Resource string
	Fields   []string
	Body     string
	Note     string
}

func steps(p plan.Plan) []step {
	var out []step
	for _, s := range p.Steps {
		st := step{Op: s.Op, Resource: s.Resource(), Body: string(s.Body)}
		for _, c := range s.Changes {
			st.Fields = append(st.Fields, c.Field)
		}
		switch {
		case s.Refused != "":
			st.Note = "refused"
		case s.Pending != 0:
			st.Note = "pending"
		case s.ChangeRequest:
			st.Note = "change request"
		}
		out = append(out, st)
	}
	return out
}

func TestMake(t *testing.T) {
	flag := eval.Flag{IsEnabled: true, RolloutPercentage: pct(10), Description: str("kept by people"),
		Rules: []eval.Rule{{Attribute: "plan", Operator: eval.OpNotIn, Values: []string{"pro"}}}}
	for _, tc := range []struct {
		name  string
		file  string
		state plan.State
		prune bool
		want  []step
	}{{
		name: "the same flag: nothing to do, fields left out untouched",
		file: `
version: 1
projects:
  - slug: checkout
    environments:
      - slug: production
        flags:
          - {key: beta, is_enabled: true, rollout_percentage: 10, rules: [{attribute: plan, operator: not_in, values: [pro]}]}`,
		state: server(false, map[string]eval.Flag{"beta": flag}, nil),
	}, {
		name: "a changed field is patched alone",
		file: `
version: 1
projects:
  - slug: checkout
    environments:
      - slug: production
        flags:
          - {key: beta, rollout_percentage: 25}`,
		state: server(false, map[string]eval.Flag{"beta": flag}, nil),
		want:  []step{{Op: plan.UpdateFlag, Resource: "flag checkout/production/beta", Fields: []string{"rollout_percentage"}, Body: `{"rollout_percentage":25}`}},
	}, {
		name: "a new project brings its seeded environments; segments before flags, prerequisites first",
		file: `
version: 1
projects:
  - slug: shop
    name: Shop
    environments:
      - slug: production
        require_approval: true
        segments:
          - {key: staff, rules: [{attribute: email, operator: ends_with, values: ["@acme.com"]}]}
        flags:
          - {key: checkout-v2, prerequisites: [{flag_key: payments}], rules: [{segment_key: staff}]}
          - {key: payments, is_enabled: true}
      - slug: qa
        color: "#123456"`,
		state: plan.State{},
		want: []step{
			{Op: plan.CreateProject, Resource: "project shop", Fields: []string{"name"}, Body: `{"name":"Shop"}`},
			{Op: plan.CreateSegment, Resource: "segment shop/production/staff", Fields: []string{"rules"},
				Body: `{"key":"staff","name":"staff","rules":[{"attribute":"email","operator":"ends_with","values":["@acme.com"]}]}`},
			{Op: plan.CreateFlag, Resource: "flag shop/production/payments", Fields: []string{"is_enabled"}, Body: `{"is_enabled":true,"key":"payments"}`},
			{Op: plan.CreateFlag, Resource: "flag shop/production/checkout-v2", Fields: []string{"prerequisites", "rules"},
				Body: `{"is_enabled":false,"key":"checkout-v2","prerequisites":[{"flag_key":"payments"}],"rules":[{"values":[],"segment_key":"staff"}]}`},
			{Op: plan.SetApproval, Resource: "environment shop/production", Fields: []string{"require_approval"}, Body: `{"require_approval":true}`},
			{Op: plan.CreateEnvironment, Resource: "environment shop/qa", Fields: []string{"slug", "name", "color"}, Body: `{"color":"#123456","name":"qa","slug":"qa"}`},
		},
	}, {
		name: "prune deletes what the file does not name, dependents first",
		file: `
version: 1
projects:
  - slug: checkout
    environments:
      - slug: production
        flags:
          - {key: keep}`,
		state: server(false, map[string]eval.Flag{"keep": {}, "base": {}, "top": {Prerequisites: []eval.Prerequisite{{FlagKey: "base"}}}},
			map[string]plan.Segment{"old": {Name: "Old"}}),
		prune: true,
		want: []step{
			{Op: plan.DeleteFlag, Resource: "flag checkout/production/top"},
			{Op: plan.DeleteFlag, Resource: "flag checkout/production/base"},
			{Op: plan.DeleteSegment, Resource: "segment checkout/production/old"},
		},
	}, {
		name: "without prune nothing is deleted",
		file: `
version: 1
projects:
  - slug: checkout
    environments:
      - slug: production
        flags: [{key: keep}]`,
		state: server(false, map[string]eval.Flag{"keep": {}, "other": {}}, nil),
	}, {
		name: "approval: flag changes open change requests, one already pending is not opened again, segment writes are refused",
		file: `
version: 1
projects:
  - slug: checkout
    environments:
      - slug: production
        segments: [{key: staff, name: Staff people}]
        flags:
          - {key: beta, rollout_percentage: 50}
          - {key: other, is_enabled: true}
          - {key: fresh}`,
		state: server(true, map[string]eval.Flag{"beta": flag, "other": {}}, map[string]plan.Segment{"staff": {Name: "Staff"}},
			plan.ChangeRequest{ID: 7, FlagKey: "other", Patch: json.RawMessage(`{"is_enabled": true}`)}),
		want: []step{
			{Op: plan.UpdateSegment, Resource: "segment checkout/production/staff", Fields: []string{"name"}, Body: `{"name":"Staff people"}`, Note: "refused"},
			{Op: plan.UpdateFlag, Resource: "flag checkout/production/beta", Fields: []string{"rollout_percentage"}, Body: `{"rollout_percentage":50}`, Note: "change request"},
			{Op: plan.UpdateFlag, Resource: "flag checkout/production/other", Fields: []string{"is_enabled"}, Body: `{"is_enabled":true}`, Note: "pending"},
			{Op: plan.CreateFlag, Resource: "flag checkout/production/fresh", Body: `{"is_enabled":false,"key":"fresh"}`},
		},
	}, {
		name: "approval turned off first, then the writes are direct",
		file: `
version: 1
projects:
  - slug: checkout
    environments:
      - slug: production
        require_approval: false
        flags: [{key: beta, rollout_percentage: 50}]`,
		state: server(true, map[string]eval.Flag{"beta": flag}, nil),
		want: []step{
			{Op: plan.SetApproval, Resource: "environment checkout/production", Fields: []string{"require_approval"}, Body: `{"require_approval":false}`},
			{Op: plan.UpdateFlag, Resource: "flag checkout/production/beta", Fields: []string{"rollout_percentage"}, Body: `{"rollout_percentage":50}`},
		},
	}, {
		name: "archival, and an object value patched member by member",
		file: `
version: 1
projects:
  - slug: checkout
    name: Checkout
    environments:
      - slug: production
        name: Prod
        flags:
          - {key: layout, flag_type: json, default_value: {cols: 3}, archived: true}
          - {key: gone, archived: false}`,
		state: server(false, map[string]eval.Flag{
			"layout": {FlagType: eval.FlagTypeJSON, DefaultValue: json.RawMessage(`{"cols":2,"dense":true}`)},
			"gone":   {ArchivedAt: &time.Time{}},
		}, nil),
		want: []step{
			{Op: plan.UpdateEnvironment, Resource: "environment checkout/production", Fields: []string{"name"}, Body: `{"name":"Prod"}`},
			{Op: plan.UpdateFlag, Resource: "flag checkout/production/layout", Fields: []string{"default_value"}, Body: `{"default_value":{"cols":3,"dense":null}}`},
			{Op: plan.ArchiveFlag, Resource: "flag checkout/production/layout", Fields: []string{"archived"}},
			{Op: plan.UnarchiveFlag, Resource: "flag checkout/production/gone", Fields: []string{"archived"}},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := plan.Make(load(t, tc.file), tc.state, tc.prune)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, steps(p)); diff != "" {
				t.Errorf("steps (-want +got):\n%s\n%s", diff, p.Text())
			}
		})
	}
}

// The text names each resource and each changed field, down to the member
// of a rule that changed.
func TestText(t *testing.T) {
	state := server(false, map[string]eval.Flag{"beta": {IsEnabled: true,
		Rules: []eval.Rule{{Attribute: "plan", Operator: eval.OpEquals, Values: []string{"pro"}}}}}, nil)
	f := load(t, `
version: 1
projects:
  - slug: checkout
    environments:
      - slug: production
        flags:
          - {key: beta, rules: [{attribute: plan, operator: equals, values: [pro, enterprise]}]}
          - {key: fresh, is_enabled: true}`)
	p, err := plan.Make(f, state, false)
	if err != nil {
		t.Fatal(err)
	}
	want := `~ flag checkout/production/beta
    rules.0.values: ["pro"] → ["pro","enterprise"]
+ flag checkout/production/fresh
    is_enabled: true

Plan: 1 to create, 1 to change, 0 to delete.
`
	if got := p.Text(); got != want {
		t.Errorf("text:\n%s\nwant:\n%s", got, want)
	}
	if !strings.Contains(plan.Plan{}.Text(), "No changes") {
		t.Error("an empty plan says so")
	}
}
