package flagfile

import (
	"encoding/json"
	"fmt"

	"github.com/switchyard/switchyard/sdkgo/eval"
)

// FlagFields are the fields of a flag that a file can manage, in the form
// the server keeps them: what export writes, and what the plan compares.
func FlagFields(f eval.Flag) (Fields, error) {
	raw, err := json.Marshal(f)
	if err != nil {
		return nil, err
	}
	var all Fields
	if err := json.Unmarshal(raw, &all); err != nil {
		return nil, err
	}
	out := Fields{}
	for _, name := range order {
		if v, ok := all[name]; ok && name != "name" {
			out[name] = v
		}
	}
	if f.ArchivedAt != nil {
		out["archived"] = json.RawMessage("true")
	}
	return out, nil
}

// CanonicalFlag is the file's fields of fl as the server will keep them
// (rules and values normalised as the evaluator's model writes them), so
// that they compare equal to FlagFields of the flag they describe.
func CanonicalFlag(fl Resource) (Fields, error) {
	merged, err := Merge(eval.Flag{}, fl)
	if err != nil {
		return nil, fmt.Errorf("flag %s: %w", fl.Key, err)
	}
	all, err := FlagFields(merged)
	if err != nil {
		return nil, err
	}
	out := Fields{}
	for name, v := range fl.Fields {
		if name == "archived" {
			out[name] = v
			continue
		}
		out[name] = all[name]
	}
	return out, nil
}

// SegmentFields are a segment's manageable fields in the form the server
// keeps them.
func SegmentFields(name string, description *string, rules []eval.Rule) (Fields, error) {
	rs, err := canonicalRules(rules)
	if err != nil {
		return nil, err
	}
	n, _ := json.Marshal(name)
	d, _ := json.Marshal(description)
	return Fields{"name": n, "description": d, "rules": rs}, nil
}

// CanonicalSegment is the file's fields of a segment as the server will
// keep them.
func CanonicalSegment(seg Resource) (Fields, error) {
	out := Fields{}
	for name, v := range seg.Fields {
		out[name] = v
	}
	if raw, ok := seg.Fields["rules"]; ok {
		var rules []eval.Rule
		if err := json.Unmarshal(raw, &rules); err != nil {
			return nil, fmt.Errorf("segment %s: rules: %w", seg.Key, err)
		}
		rs, err := canonicalRules(rules)
		if err != nil {
			return nil, err
		}
		out["rules"] = rs
	}
	return out, nil
}

// canonicalRules writes rules as a flag's rules are written: the one
// normalisation of the evaluator's model.
func canonicalRules(rules []eval.Rule) (json.RawMessage, error) {
	fields, err := FlagFields(eval.Flag{Rules: rules})
	if err != nil {
		return nil, err
	}
	return fields["rules"], nil
}
