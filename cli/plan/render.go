package plan

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Empty reports a plan with nothing to do: no write to send and no change
// request still to be approved.
func (p Plan) Empty() bool { return len(p.Steps) == 0 }

// Counts are how many resources a plan creates, changes and deletes, and
// how many of its changes wait on change requests.
type Counts struct {
	Create, Change, Delete, ChangeRequests int
}

// Count counts the plan's steps.
func (p Plan) Count() Counts {
	var c Counts
	for _, s := range p.Steps {
		switch s.action() {
		case '+':
			c.Create++
		case '-':
			c.Delete++
		default:
			c.Change++
		}
		if s.ChangeRequest {
			c.ChangeRequests++
		}
	}
	return c
}

func (s Step) action() byte {
	switch s.Op {
	case CreateProject, CreateEnvironment, CreateSegment, CreateFlag:
		return '+'
	case DeleteSegment, DeleteFlag:
		return '-'
	}
	return '~'
}

// Resource names the step's resource: kind and path of slugs and key.
func (s Step) Resource() string {
	kind := strings.Fields(string(s.Op))[1]
	if s.Op == SetApproval {
		kind = "environment"
	}
	path := s.Project
	if s.Environment != "" {
		path += "/" + s.Environment
	}
	if s.Key != "" {
		path += "/" + s.Key
	}
	return kind + " " + path
}

// Text is the plan for people, readable in a pull request comment: one
// line per resource (+ created, ~ changed, - deleted) and one per field
// under it, nested values down to the member that differs.
func (p Plan) Text() string {
	if p.Empty() {
		return "No changes: the server holds what the file says.\n"
	}
	var b strings.Builder
	for _, s := range p.Steps {
		fmt.Fprintf(&b, "%c %s", s.action(), s.Resource())
		switch {
		case s.Refused != "":
			fmt.Fprintf(&b, "  (refused: %s)", s.Refused)
		case s.Pending != 0:
			fmt.Fprintf(&b, "  (change request %d, pending approval)", s.Pending)
		case s.ChangeRequest:
			b.WriteString("  (opens a change request: the environment requires approval)")
		}
		b.WriteByte('\n')
		for _, c := range s.Changes {
			if s.action() == '+' {
				fmt.Fprintf(&b, "    %s: %s\n", c.Field, compact(c.To))
				continue
			}
			fieldLines(&b, c.Field, c.From, c.To)
		}
	}
	c := p.Count()
	fmt.Fprintf(&b, "\nPlan: %d to create, %d to change, %d to delete", c.Create, c.Change, c.Delete)
	if c.ChangeRequests > 0 {
		fmt.Fprintf(&b, " (%d through change requests)", c.ChangeRequests)
	}
	b.WriteString(".\n")
	return b.String()
}

// fieldLines writes one field's change, going into objects and lists of
// equal length so that a long value shows only the part that changed.
func fieldLines(b *strings.Builder, field string, from, to json.RawMessage) {
	if from != nil && to != nil {
		var x, y any
		if json.Unmarshal(from, &x) == nil && json.Unmarshal(to, &y) == nil {
			switch xv := x.(type) {
			case map[string]any:
				if yv, ok := y.(map[string]any); ok {
					keys := map[string]bool{}
					for k := range xv {
						keys[k] = true
					}
					for k := range yv {
						keys[k] = true
					}
					names := make([]string, 0, len(keys))
					for k := range keys {
						names = append(names, k)
					}
					sort.Strings(names)
					for _, k := range names {
						a, ina := xv[k]
						c, inc := yv[k]
						if ina && inc && equal(raw(a), raw(c)) {
							continue
						}
						fieldLines(b, field+"."+k, optional(a, ina), optional(c, inc))
					}
					return
				}
			case []any:
				if yv, ok := y.([]any); ok && len(yv) == len(xv) {
					for i := range xv {
						if !equal(raw(xv[i]), raw(yv[i])) {
							fieldLines(b, field+"."+strconv.Itoa(i), raw(xv[i]), raw(yv[i]))
						}
					}
					return
				}
			}
		}
	}
	switch {
	case from == nil:
		fmt.Fprintf(b, "    %s: (none) → %s\n", field, compact(to))
	case to == nil:
		fmt.Fprintf(b, "    %s: %s → (none)\n", field, compact(from))
	default:
		fmt.Fprintf(b, "    %s: %s → %s\n", field, compact(from), compact(to))
	}
}

func optional(v any, present bool) json.RawMessage {
	if !present {
		return nil
	}
	return raw(v)
}

func compact(v json.RawMessage) string {
	var x any
	if json.Unmarshal(v, &x) != nil {
		return string(v)
	}
	return string(raw(x))
}
