package flagfile

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// lines maps a JSON pointer into the document to the line it starts on.
type lines map[string]int

// at is the line of ptr, or of the nearest enclosing value the file has.
func (l lines) at(ptr string) int {
	for {
		if n, ok := l[ptr]; ok {
			return n
		}
		i := strings.LastIndexByte(ptr, '/')
		if i < 0 {
			return 1
		}
		ptr = ptr[:i]
	}
}

// yamlLine finds the line in a YAML syntax error; the library gives it only
// in its message.
var yamlLine = regexp.MustCompile(`line (\d+)`)

// decode reads YAML (JSON is YAML too) into plain values (maps, slices,
// strings, float64 or int64 numbers, booleans, nil), with the line of each
// value by its JSON pointer.
func decode(raw []byte) (any, lines, []finding) {
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		line := 1
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			line, _ = strconv.Atoi(m[1])
		}
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		msg = yamlLine.ReplaceAllString(msg, "")
		return nil, nil, []finding{{line: line, msg: "not YAML or JSON: " + strings.Trim(msg, " :")}}
	}
	d := decoder{lines: lines{}}
	if doc.Kind == 0 {
		return nil, d.lines, []finding{{line: 1, msg: "the file is empty"}}
	}
	v := d.value(&doc, "")
	return v, d.lines, d.problems
}

type decoder struct {
	lines    lines
	problems []finding
}

func (d *decoder) value(n *yaml.Node, ptr string) any {
	d.lines[ptr] = n.Line
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil
		}
		return d.value(n.Content[0], ptr)
	case yaml.AliasNode:
		return d.value(n.Alias, ptr)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode || (k.ShortTag() != "!!str" && k.ShortTag() != "!!int") {
				d.problems = append(d.problems, finding{ptr: ptr, line: k.Line, msg: "a field name must be a string"})
				continue
			}
			if _, dup := m[k.Value]; dup {
				d.problems = append(d.problems, finding{ptr: ptr + "/" + escape(k.Value), line: k.Line, msg: "given twice"})
				continue
			}
			m[k.Value] = d.value(v, ptr+"/"+escape(k.Value))
		}
		return m
	case yaml.SequenceNode:
		s := make([]any, len(n.Content))
		for i, c := range n.Content {
			s[i] = d.value(c, ptr+"/"+strconv.Itoa(i))
		}
		return s
	}
	return d.scalar(n, ptr)
}

func (d *decoder) scalar(n *yaml.Node, ptr string) any {
	switch n.ShortTag() {
	case "!!null":
		return nil
	case "!!bool":
		var b bool
		if n.Decode(&b) == nil {
			return b
		}
	case "!!int":
		var i int64
		if n.Decode(&i) == nil {
			return i
		}
		var f float64
		if n.Decode(&f) == nil {
			return f
		}
	case "!!float":
		var f float64
		if n.Decode(&f) == nil {
			if math.IsInf(f, 0) || math.IsNaN(f) {
				d.problems = append(d.problems, finding{ptr: ptr, msg: fmt.Sprintf("%s is not a JSON number", n.Value)})
				return nil
			}
			return f
		}
	}
	// Strings, and everything YAML types further (timestamps, binary), as
	// written: JSON has no such types.
	return n.Value
}

// escape is a JSON pointer's escaping of one key (RFC 6901).
func escape(k string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(k)
}
