package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"

	"github.com/switchyard/switchyard/cli/flagfile"
	"github.com/switchyard/switchyard/sdkgo/eval"
	"github.com/switchyard/switchyard/sdkgo/eval/check"
)

// Op is what one step does, through which route.
type Op string

// The steps' operations, each one route of the API.
const (
	CreateProject     Op = "create project"
	RenameProject     Op = "rename project"
	CreateEnvironment Op = "create environment"
	UpdateEnvironment Op = "update environment"
	SetApproval       Op = "set require_approval"
	CreateSegment     Op = "create segment"
	UpdateSegment     Op = "update segment"
	DeleteSegment     Op = "delete segment"
	CreateFlag        Op = "create flag"
	UpdateFlag        Op = "update flag"
	ArchiveFlag       Op = "archive flag"
	UnarchiveFlag     Op = "unarchive flag"
	DeleteFlag        Op = "delete flag"
)

// Step is one write: its operation, the resource (by project slug,
// environment slug and key), the fields it changes, and the request body.
type Step struct {
	Op          Op              `json:"op"`
	Project     string          `json:"project"`
	Environment string          `json:"environment,omitempty"`
	Key         string          `json:"key,omitempty"`
	Changes     []Change        `json:"changes,omitempty"`
	Body        json.RawMessage `json:"body,omitempty"`
	// ChangeRequest: the environment requires approval, so the write
	// opens a change request instead of changing the flag.
	ChangeRequest bool `json:"change_request,omitempty"`
	// Pending is the id of a pending change request that already asks for
	// exactly this change: nothing is sent.
	Pending int64 `json:"pending_change_request,omitempty"`
	// Refused says why the server will refuse the step (an environment that
	// requires approval refuses segment writes and flag deletion).
	Refused string `json:"refused,omitempty"`
}

// Change is one field: its value before (absent on creation) and after
// (absent on deletion).
type Change struct {
	Field string          `json:"field"`
	From  json.RawMessage `json:"from,omitempty"`
	To    json.RawMessage `json:"to,omitempty"`
}

// Plan is the steps, in the order they must run: projects and environments
// first; in each environment an approval requirement being turned off,
// then segments, flags with their prerequisites before them, pruned flags
// and segments, and last an approval requirement being turned on.
type Plan struct {
	Steps []Step `json:"steps"`
}

// Make computes the plan that makes the server hold what the file says.
// The file must have passed flagfile.Check against the same state. Fields
// the file leaves out are not touched; resources it does not name are
// deleted only with prune, and only flags and segments of the environments
// it names.
func Make(f *flagfile.File, s State, prune bool) (Plan, error) {
	var p Plan
	for _, fp := range f.Projects {
		sp := s.Projects[fp.Slug]
		if sp == nil {
			name := fp.Slug
			if fp.Name != nil {
				name = *fp.Name
			}
			p.add(Step{Op: CreateProject, Project: fp.Slug, Body: raw(map[string]any{"name": name}),
				Changes: []Change{{Field: "name", To: raw(name)}}})
			sp = &Project{Slug: fp.Slug, Name: name, Environments: map[string]*Environment{}}
			for _, e := range check.SeededEnvironments() {
				sp.Environments[e.Slug] = &Environment{Slug: e.Slug, Name: e.Name, Color: e.Color,
					Flags: map[string]eval.Flag{}, Segments: map[string]Segment{}}
			}
		} else if fp.Name != nil && *fp.Name != sp.Name {
			p.add(Step{Op: RenameProject, Project: fp.Slug, Body: raw(map[string]any{"name": *fp.Name}),
				Changes: []Change{{Field: "name", From: raw(sp.Name), To: raw(*fp.Name)}}})
		}
		for _, fe := range fp.Environments {
			if err := p.environment(fp.Slug, fe, sp.Environments[fe.Slug], prune); err != nil {
				return Plan{}, err
			}
		}
	}
	return p, nil
}

func (p *Plan) add(s Step) { p.Steps = append(p.Steps, s) }

func (p *Plan) environment(project string, fe flagfile.Environment, se *Environment, prune bool) error {
	at := Step{Project: project, Environment: fe.Slug}
	if se == nil {
		in := map[string]any{"slug": fe.Slug, "name": fe.Slug}
		changes := []Change{{Field: "slug", To: raw(fe.Slug)}}
		if fe.Name != nil {
			in["name"] = *fe.Name
		}
		changes = append(changes, Change{Field: "name", To: raw(in["name"])})
		if fe.Color != nil {
			in["color"] = *fe.Color
			changes = append(changes, Change{Field: "color", To: raw(*fe.Color)})
		}
		p.add(with(at, Step{Op: CreateEnvironment, Body: raw(in), Changes: changes}))
		se = &Environment{Slug: fe.Slug, Flags: map[string]eval.Flag{}, Segments: map[string]Segment{}}
	} else {
		patch, changes := map[string]any{}, []Change(nil)
		if fe.Name != nil && *fe.Name != se.Name {
			patch["name"] = *fe.Name
			changes = append(changes, Change{Field: "name", From: raw(se.Name), To: raw(*fe.Name)})
		}
		if fe.Color != nil && *fe.Color != se.Color {
			patch["color"] = *fe.Color
			changes = append(changes, Change{Field: "color", From: raw(se.Color), To: raw(*fe.Color)})
		}
		if len(changes) > 0 {
			p.add(with(at, Step{Op: UpdateEnvironment, Body: raw(patch), Changes: changes}))
		}
	}
	approval := se.RequireApproval
	approvalStep := func(on bool) Step {
		return with(at, Step{Op: SetApproval, Body: raw(map[string]any{"require_approval": on}),
			Changes: []Change{{Field: "require_approval", From: raw(!on), To: raw(on)}}})
	}
	// Turned off first, so that what follows is written directly; turned
	// on last, so that it is.
	if fe.RequireApproval != nil && !*fe.RequireApproval && approval {
		p.add(approvalStep(false))
		approval = false
	}
	refused := ""
	if approval {
		refused = "the environment requires approval: segments cannot be written, nor flags deleted, there"
	}
	named := map[string]bool{}
	for _, seg := range fe.Segments {
		named[seg.Key] = true
		if err := p.segment(at, seg, se, refused); err != nil {
			return err
		}
	}
	flagsNamed := map[string]bool{}
	for _, fl := range byPrerequisites(fe.Flags) {
		flagsNamed[fl.Key] = true
		if err := p.flag(at, fl, se, approval); err != nil {
			return err
		}
	}
	if prune {
		for _, key := range dependentsFirst(se.Flags) {
			if !flagsNamed[key] {
				p.add(with(at, Step{Op: DeleteFlag, Key: key, Refused: refused}))
			}
		}
		for _, key := range sortedKeys(se.Segments) {
			if !named[key] {
				p.add(with(at, Step{Op: DeleteSegment, Key: key, Refused: refused}))
			}
		}
	}
	if fe.RequireApproval != nil && *fe.RequireApproval && !approval {
		p.add(approvalStep(true))
	}
	return nil
}

func (p *Plan) segment(at Step, seg flagfile.Resource, se *Environment, refused string) error {
	want, err := flagfile.CanonicalSegment(seg)
	if err != nil {
		return err
	}
	cur, ok := se.Segments[seg.Key]
	if !ok {
		in := map[string]any{"key": seg.Key, "name": seg.Key}
		for k, v := range want {
			in[k] = v
		}
		p.add(with(at, Step{Op: CreateSegment, Key: seg.Key, Body: raw(in), Changes: created(want), Refused: refused}))
		return nil
	}
	have, err := flagfile.SegmentFields(cur.Name, cur.Description, cur.Rules)
	if err != nil {
		return err
	}
	changes, patch := compare(have, want)
	if len(changes) > 0 {
		p.add(with(at, Step{Op: UpdateSegment, Key: seg.Key, Body: raw(patch), Changes: changes, Refused: refused}))
	}
	return nil
}

func (p *Plan) flag(at Step, fl flagfile.Resource, se *Environment, approval bool) error {
	want, err := flagfile.CanonicalFlag(fl)
	if err != nil {
		return err
	}
	archived, manageArchived := want["archived"]
	delete(want, "archived")
	cur, ok := se.Flags[fl.Key]
	if !ok {
		in := map[string]any{"key": fl.Key, "is_enabled": false} // a new flag is off unless the file says
		for k, v := range want {
			in[k] = v
		}
		changes := created(want)
		p.add(with(at, Step{Op: CreateFlag, Key: fl.Key, Body: raw(in), Changes: changes}))
		if manageArchived && string(archived) == "true" {
			p.add(with(at, Step{Op: ArchiveFlag, Key: fl.Key, Changes: []Change{{Field: "archived", From: raw(false), To: raw(true)}}}))
		}
		return nil
	}
	have, err := flagfile.FlagFields(cur)
	if err != nil {
		return err
	}
	wasArchived := cur.ArchivedAt != nil
	if manageArchived && string(archived) == "false" && wasArchived {
		p.add(with(at, Step{Op: UnarchiveFlag, Key: fl.Key, Changes: []Change{{Field: "archived", From: raw(true), To: raw(false)}}}))
	}
	changes, patch := compare(have, want)
	if len(changes) > 0 {
		for _, c := range changes {
			if field := c.Field; containsNullMember(c.To) {
				return fmt.Errorf("flag %s in %s/%s: %s holds a null member, which a merge patch cannot set (it would remove it); change the flag with switchyard flags create instead",
					fl.Key, at.Project, at.Environment, field)
			}
		}
		step := with(at, Step{Op: UpdateFlag, Key: fl.Key, Body: raw(patch), Changes: changes, ChangeRequest: approval})
		if approval {
			step.Pending = pending(se.Pending, fl.Key, step.Body)
		}
		p.add(step)
	}
	if manageArchived && string(archived) == "true" && !wasArchived {
		p.add(with(at, Step{Op: ArchiveFlag, Key: fl.Key, Changes: []Change{{Field: "archived", From: raw(false), To: raw(true)}}}))
	}
	return nil
}

// with is s at the project and environment of at.
func with(at, s Step) Step {
	s.Project, s.Environment = at.Project, at.Environment
	return s
}

// compare lists the fields of want that differ from have, and the merge
// patch that makes them so.
func compare(have, want flagfile.Fields) ([]Change, map[string]json.RawMessage) {
	var changes []Change
	patch := map[string]json.RawMessage{}
	for _, name := range sortedKeys(want) {
		from, to := have[name], want[name]
		if equal(from, to) {
			continue
		}
		changes = append(changes, Change{Field: name, From: from, To: to})
		patch[name] = mergePatch(from, to)
	}
	return changes, patch
}

// created lists every field of a new resource.
func created(want flagfile.Fields) []Change {
	var out []Change
	for _, name := range sortedKeys(want) {
		out = append(out, Change{Field: name, To: want[name]})
	}
	return out
}

// mergePatch is the RFC 7396 patch of one field from one value to another:
// the value itself, but for an object replacing an object, where members
// that go are set to null (a merge patch merges objects).
func mergePatch(from, to json.RawMessage) json.RawMessage {
	var a, b any
	if json.Unmarshal(from, &a) != nil || json.Unmarshal(to, &b) != nil {
		return to
	}
	return raw(objectPatch(a, b))
}

func objectPatch(from, to any) any {
	fo, ok1 := from.(map[string]any)
	to2, ok2 := to.(map[string]any)
	if !ok1 || !ok2 {
		return to
	}
	out := map[string]any{}
	for k := range fo {
		if _, ok := to2[k]; !ok {
			out[k] = nil
		}
	}
	for k, v := range to2 {
		if !reflect.DeepEqual(fo[k], v) {
			out[k] = objectPatch(fo[k], v)
		}
	}
	return out
}

// containsNullMember reports a null member of an object inside a field's
// patch, which merge patch reads as "remove".
func containsNullMember(v json.RawMessage) bool {
	var x any
	if json.Unmarshal(v, &x) != nil {
		return false
	}
	var walk func(any, bool) bool
	walk = func(x any, inObject bool) bool {
		switch x := x.(type) {
		case nil:
			return inObject
		case map[string]any:
			for _, m := range x {
				if walk(m, true) {
					return true
				}
			}
		}
		return false
	}
	o, ok := x.(map[string]any)
	return ok && walk(o, false)
}

// pending finds a pending change request of key that asks for patch.
func pending(crs []ChangeRequest, key string, patch json.RawMessage) int64 {
	for _, cr := range crs {
		if cr.FlagKey == key && equal(cr.Patch, patch) {
			return cr.ID
		}
	}
	return 0
}

// equal compares two JSON values by meaning (member order, number form).
func equal(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// byPrerequisites orders the file's flags so that each comes after the
// flags of the file it names as prerequisites, otherwise in file order. A
// cycle is broken where it closes: such a chain evaluates closed in any
// order.
func byPrerequisites(flags []flagfile.Resource) []flagfile.Resource {
	index := map[string]int{}
	for i, f := range flags {
		index[f.Key] = i
	}
	state := make([]int, len(flags)) // 0 unseen, 1 in progress, 2 done
	out := make([]flagfile.Resource, 0, len(flags))
	var visit func(i int)
	visit = func(i int) {
		if state[i] != 0 {
			return
		}
		state[i] = 1
		for _, pre := range prerequisiteKeys(flags[i].Fields["prerequisites"]) {
			if j, ok := index[pre]; ok {
				visit(j)
			}
		}
		state[i] = 2
		out = append(out, flags[i])
	}
	for i := range flags {
		visit(i)
	}
	return out
}

func prerequisiteKeys(v json.RawMessage) []string {
	var pres []eval.Prerequisite
	_ = json.Unmarshal(v, &pres)
	keys := make([]string, len(pres))
	for i, p := range pres {
		keys[i] = p.FlagKey
	}
	return keys
}

// dependentsFirst orders the server's flags so that a flag comes before
// the flags it names as prerequisites: the order in which to delete them.
func dependentsFirst(flags map[string]eval.Flag) []string {
	var out []string
	state := map[string]int{}
	var visit func(key string)
	visit = func(key string) {
		if state[key] != 0 {
			return
		}
		state[key] = 1
		for _, pre := range flags[key].Prerequisites {
			if _, ok := flags[pre.FlagKey]; ok {
				visit(pre.FlagKey)
			}
		}
		state[key] = 2
		out = append(out, key)
	}
	for _, key := range sortedKeys(flags) {
		visit(key)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// raw is v as JSON; v is always encodable here (strings, booleans, plain
// maps and decoded JSON).
func raw(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("plan: encode %T: %v", v, err))
	}
	return b
}
