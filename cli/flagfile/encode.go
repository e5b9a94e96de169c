package flagfile

import (
	"bytes"
	"encoding/json"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Encode writes f as YAML (block style, fields in a fixed order, lists of
// plain values on one line) or as indented JSON.
func Encode(f *File, format string) ([]byte, error) {
	raw, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, err
	}
	switch format {
	case "json":
		return append(raw, '\n'), nil
	case "yaml", "":
	default:
		return nil, fmt.Errorf("format %q: want yaml or json", format)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	restyle(&doc)
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// restyle drops the JSON styles the decoder kept: block mappings and
// sequences, and scalars quoted only where YAML needs it; a list of plain
// values stays on one line.
func restyle(n *yaml.Node) {
	switch n.Kind {
	case yaml.ScalarNode:
		n.Style = 0
	case yaml.SequenceNode:
		n.Style = 0
		flat := len(n.Content) > 0
		for _, c := range n.Content {
			flat = flat && c.Kind == yaml.ScalarNode
		}
		if flat {
			n.Style = yaml.FlowStyle
		}
	default:
		n.Style = 0
	}
	for _, c := range n.Content {
		restyle(c)
	}
}
