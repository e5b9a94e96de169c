package flagfile

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/switchyard/switchyard/sdkgo/eval"
	"github.com/switchyard/switchyard/sdkgo/eval/check"
)

// Server is what the server already holds in an environment, for the checks
// that look beyond the file: a segment or a prerequisite may name what the
// server has, and a flag is checked as it will be once the file's fields
// are set on the server's flag.
type Server struct {
	Segments map[string]bool
	Flags    map[string]eval.Flag
}

// ServerState gives the server's side of an environment by project and
// environment slug; nil, or a zero Server, is a file checked on its own.
type ServerState func(project, env string) Server

// Check applies the rules the server applies to every write (package
// check), and the file's own: slugs and keys given once, a project's name
// that gives its slug, segments and prerequisites that name what the
// environment has. Offline (server nil), the environment is what the file
// says of it.
func Check(f *File, server ServerState) Problems {
	var found []finding
	add := func(ptr, format string, args ...any) {
		found = append(found, finding{ptr: ptr, msg: fmt.Sprintf(format, args...)})
	}
	projects := map[string]string{}
	for _, p := range f.Projects {
		once(projects, p.Slug, p.at+"/slug", f.lines, add)
		if p.Name != nil {
			name := strings.TrimSpace(*p.Name)
			switch got := check.ProjectSlug(name); {
			case name == "":
				add(p.at+"/name", "must not be empty")
			case got != p.Slug:
				add(p.at+"/name", "gives the slug %q, not %q: a project's slug is derived from its name", got, p.Slug)
			}
		}
		envs := map[string]string{}
		for _, e := range p.Environments {
			once(envs, e.Slug, e.at+"/slug", f.lines, add)
			var s Server
			if server != nil {
				s = server(p.Slug, e.Slug)
			}
			found = append(found, checkEnvironment(e, s, f.lines)...)
		}
	}
	return place(found, f.tree, f.lines)
}

// once reports a slug or key given a second time.
func once(seen map[string]string, id, ptr string, ls lines, add func(string, string, ...any)) {
	if first, dup := seen[id]; dup {
		add(ptr, "%q is given twice (first at line %d)", id, ls.at(first))
		return
	}
	seen[id] = ptr
}

func checkEnvironment(e Environment, s Server, ls lines) []finding {
	var found []finding
	add := func(ptr, format string, args ...any) {
		found = append(found, finding{ptr: ptr, msg: fmt.Sprintf(format, args...)})
	}
	env := check.Env{Segments: map[string]bool{}, FlagTypes: map[string]eval.FlagType{}}
	for k := range s.Segments {
		env.Segments[k] = true
	}
	for k, fl := range s.Flags {
		env.FlagTypes[k] = fl.FlagType
	}
	segments := map[string]string{}
	for _, seg := range e.Segments {
		once(segments, seg.Key, seg.at+"/key", ls, add)
		env.Segments[seg.Key] = true
		name := seg.Key
		if raw, ok := seg.Fields["name"]; ok {
			_ = json.Unmarshal(raw, &name)
		}
		var rules []eval.Rule
		if raw, ok := seg.Fields["rules"]; ok && json.Unmarshal(raw, &rules) != nil {
			add(seg.at+"/rules", "not a list of rules")
			continue
		}
		found = append(found, problemsAt(seg.at, check.Segment(seg.Key, name, rules))...)
	}
	merged := make([]eval.Flag, len(e.Flags))
	flags := map[string]string{}
	for i, fl := range e.Flags {
		once(flags, fl.Key, fl.at+"/key", ls, add)
		var err error
		if merged[i], err = Merge(s.Flags[fl.Key], fl); err != nil {
			add(fl.at, "%v", err)
			continue
		}
		env.FlagTypes[fl.Key] = merged[i].FlagType
	}
	for i, fl := range e.Flags {
		if merged[i].Key == "" {
			continue // could not be read; said above
		}
		found = append(found, problemsAt(fl.at, check.Flag(merged[i], env))...)
		for j, pre := range merged[i].Prerequisites {
			if _, ok := env.FlagTypes[pre.FlagKey]; !ok && check.Key(pre.FlagKey) && pre.FlagKey != fl.Key {
				add(fmt.Sprintf("%s/prerequisites/%d/flag_key", fl.at, j), "names no flag of this environment: %q", pre.FlagKey)
			}
		}
	}
	return found
}

// problemsAt places check's problems of the resource at ptr.
func problemsAt(ptr string, ps check.Problems) []finding {
	out := make([]finding, len(ps))
	for i, p := range ps {
		out[i] = finding{ptr: ptr + "/" + strings.ReplaceAll(p.Field, ".", "/"), msg: p.Message}
	}
	return out
}

// Merge is the flag the server will hold once the file's fields of fl are
// set on current (the zero Flag when there is none yet): each field the
// file gives replaces the server's, the others stay. archived is not a
// field of the flag itself.
func Merge(current eval.Flag, fl Resource) (eval.Flag, error) {
	base := map[string]json.RawMessage{}
	if current.Key != "" {
		raw, err := json.Marshal(current)
		if err != nil {
			return eval.Flag{}, err
		}
		if err := json.Unmarshal(raw, &base); err != nil {
			return eval.Flag{}, err
		}
	}
	for k, v := range fl.Fields {
		if k != "archived" {
			base[k] = v
		}
	}
	key, _ := json.Marshal(fl.Key)
	base["key"] = key
	raw, err := json.Marshal(base)
	if err != nil {
		return eval.Flag{}, err
	}
	var out eval.Flag
	if err := json.Unmarshal(raw, &out); err != nil {
		return eval.Flag{}, fmt.Errorf("not a flag: %v", err)
	}
	return out, nil
}
