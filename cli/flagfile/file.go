package flagfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// File is a flags file: version 1 and its projects.
type File struct {
	Version  int       `json:"version"`
	Projects []Project `json:"projects"`

	tree  any   // the file as plain values, to name the fields of problems
	lines lines // the line of each value
}

// Project is a project of the file, identified by its slug.
type Project struct {
	Slug         string        `json:"slug"`
	Name         *string       `json:"name,omitempty"`
	Environments []Environment `json:"environments,omitempty"`
	at           string        // its JSON pointer in the file
}

// Environment is an environment of a project, identified by its slug.
// RequireApproval, Name and Color are managed when given.
type Environment struct {
	Slug            string     `json:"slug"`
	Name            *string    `json:"name,omitempty"`
	Color           *string    `json:"color,omitempty"`
	RequireApproval *bool      `json:"require_approval,omitempty"`
	Segments        []Resource `json:"segments,omitempty"`
	Flags           []Resource `json:"flags,omitempty"`
	at              string
}

// Resource is a flag or a segment: its key and the fields the file manages,
// each as the JSON the API takes.
type Resource struct {
	Key    string
	Fields Fields
	at     string
}

// Fields are a resource's managed fields by the API's names.
type Fields map[string]json.RawMessage

// Problem is one mistake in a file: where, which field, what.
type Problem struct {
	Line    int
	Field   string
	Message string
}

// Problems are a file's mistakes, in the order of their lines.
type Problems []Problem

// Format writes the problems as FILE:LINE: field: message lines.
func (ps Problems) Format(file string) string {
	var b strings.Builder
	for _, p := range ps {
		if p.Field == "" {
			fmt.Fprintf(&b, "%s:%d: %s\n", file, p.Line, p.Message)
			continue
		}
		fmt.Fprintf(&b, "%s:%d: %s: %s\n", file, p.Line, p.Field, p.Message)
	}
	return b.String()
}

// finding is a problem before it is placed: the JSON pointer of the value it
// is about, and its line when the pointer's own line is not the one to show.
type finding struct {
	ptr  string
	line int
	msg  string
}

// order of the managed fields when a resource is written.
var order = []string{"name", "flag_type", "is_enabled", "archived", "description", "rollout_percentage",
	"default_value", "disabled_value", "variants", "rules", "prerequisites", "tags", "owner_email", "client_side"}

// MarshalJSON writes the key first and the fields in a fixed order, so that
// an export reads the same every time.
func (r Resource) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	key, _ := json.Marshal(r.Key)
	b.WriteString(`{"key":`)
	b.Write(key)
	rank := map[string]int{}
	for i, f := range order {
		rank[f] = i + 1
	}
	names := make([]string, 0, len(r.Fields))
	for n := range r.Fields {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		ri, rj := rank[names[i]], rank[names[j]]
		if ri == 0 || rj == 0 || ri == rj {
			return (ri != 0 && rj == 0) || ((ri == 0) == (rj == 0) && names[i] < names[j])
		}
		return ri < rj
	})
	for _, n := range names {
		name, _ := json.Marshal(n)
		b.WriteByte(',')
		b.Write(name)
		b.WriteByte(':')
		b.Write(r.Fields[n])
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads a resource object: the key and every other field.
func (r *Resource) UnmarshalJSON(raw []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return err
	}
	// A key that is not a string is the schema's to report.
	_ = json.Unmarshal(m["key"], &r.Key)
	delete(m, "key")
	r.Fields = m
	return nil
}

// Parse reads a file, YAML or JSON, and checks it against the schema. The
// file comes back whenever it could be read, even with problems, so that
// Check can find the rest.
func Parse(raw []byte) (*File, Problems) {
	v, ls, found := decode(raw)
	if v == nil {
		if len(found) == 0 {
			found = append(found, finding{line: 1, msg: "the file is empty"})
		}
		return nil, place(found, v, ls)
	}
	found = append(found, validateSchema(v)...)
	plain, err := json.Marshal(v)
	if err != nil {
		return nil, append(place(found, v, ls), Problem{Line: 1, Message: err.Error()})
	}
	f := File{tree: v, lines: ls}
	if err := json.Unmarshal(plain, &f); err != nil {
		if len(found) == 0 {
			found = append(found, finding{line: 1, msg: err.Error()})
		}
		return nil, place(found, v, ls)
	}
	for i := range f.Projects {
		p := &f.Projects[i]
		p.at = "/projects/" + strconv.Itoa(i)
		for j := range p.Environments {
			e := &p.Environments[j]
			e.at = p.at + "/environments/" + strconv.Itoa(j)
			for k := range e.Segments {
				e.Segments[k].at = e.at + "/segments/" + strconv.Itoa(k)
			}
			for k := range e.Flags {
				e.Flags[k].at = e.at + "/flags/" + strconv.Itoa(k)
			}
		}
	}
	return &f, place(found, v, ls)
}

// Load is Parse, then Check against server (nil: offline): every problem of
// the file, each once, in the order of their lines.
func Load(raw []byte, server ServerState) (*File, Problems) {
	f, ps := Parse(raw)
	if f == nil {
		return nil, ps
	}
	ps = append(ps, Check(f, server)...)
	seen := map[Problem]bool{}
	out := ps[:0]
	for _, p := range ps {
		k := Problem{Line: p.Line, Field: p.Field}
		if !seen[k] {
			seen[k] = true
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return f, out
}

// validateSchema checks v against the file's JSON Schema.
func validateSchema(v any) []finding {
	s, err := schema()
	if err != nil {
		return []finding{{msg: err.Error()}}
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(schemaID, s); err != nil {
		return []finding{{msg: "the file's schema: " + err.Error()}}
	}
	compiled, err := c.Compile(schemaID)
	if err != nil {
		return []finding{{msg: "the file's schema: " + err.Error()}}
	}
	// The validator wants the values its own JSON decoder makes.
	plain, err := json.Marshal(v)
	if err != nil {
		return []finding{{msg: err.Error()}}
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(plain))
	if err != nil {
		return []finding{{msg: err.Error()}}
	}
	err = compiled.Validate(inst)
	if err == nil {
		return nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return []finding{{msg: err.Error()}}
	}
	var out []finding
	leaves(ve, v, &out)
	return out
}

var printer = message.NewPrinter(language.English)

// leaves turns the validator's tree of errors into one finding per failed
// keyword at the deepest place it failed.
func leaves(e *jsonschema.ValidationError, tree any, out *[]finding) {
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			leaves(c, tree, out)
		}
		return
	}
	ptr := ""
	for _, t := range e.InstanceLocation {
		ptr += "/" + escape(t)
	}
	if ap, ok := e.ErrorKind.(*kind.AdditionalProperties); ok {
		for _, name := range ap.Properties {
			*out = append(*out, finding{ptr: ptr + "/" + escape(name), msg: "unknown field"})
		}
		return
	}
	msg := e.ErrorKind.LocalizedString(printer)
	if _, ok := e.ErrorKind.(*kind.Enum); ok && strings.HasSuffix(ptr, "/operator") && lookup(tree, e.InstanceLocation) == "in" {
		msg = `there is no operator "in": equals holds when the attribute equals any one of the values`
	}
	*out = append(*out, finding{ptr: ptr, msg: msg})
}

// place gives each finding its line and a field named by the slugs and keys
// of the file rather than by indexes: checkout.production.flags.beta.rules.0.
func place(found []finding, tree any, ls lines) Problems {
	out := make(Problems, 0, len(found))
	for _, f := range found {
		line := f.line
		if line == 0 {
			line = ls.at(f.ptr)
		}
		out = append(out, Problem{Line: line, Field: fieldName(tree, f.ptr), Message: f.msg})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out
}

// fieldName names the value at ptr: a project by its slug, an environment
// by its slug, a flag or a segment by its key, the rest as the path below.
func fieldName(tree any, ptr string) string {
	if ptr == "" {
		return ""
	}
	tokens := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	var parts []string
	v := tree
	for i := 0; i < len(tokens); i++ {
		t := strings.NewReplacer("~1", "/", "~0", "~").Replace(tokens[i])
		m, _ := v.(map[string]any)
		next := m[t]
		list, isList := next.([]any)
		id := map[string]string{"projects": "slug", "environments": "slug", "flags": "key", "segments": "key"}[t]
		if id != "" && isList && i+1 < len(tokens) {
			if n, err := strconv.Atoi(tokens[i+1]); err == nil && n < len(list) {
				item, _ := list[n].(map[string]any)
				name, ok := item[id].(string)
				if !ok || name == "" {
					name = t + "." + tokens[i+1]
				} else if t == "flags" || t == "segments" {
					name = t + "." + name
				}
				parts, v, i = append(parts, name), list[n], i+1
				continue
			}
		}
		parts = append(parts, t)
		if isList {
			if i+1 < len(tokens) {
				if n, err := strconv.Atoi(tokens[i+1]); err == nil && n < len(list) {
					parts, v, i = append(parts, tokens[i+1]), list[n], i+1
					continue
				}
			}
		}
		v = next
	}
	return strings.Join(parts, ".")
}

// lookup is the plain value at a path of tokens, or nil.
func lookup(v any, path []string) any {
	for _, t := range path {
		switch x := v.(type) {
		case map[string]any:
			v = x[t]
		case []any:
			i, err := strconv.Atoi(t)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}
