package flagfile

import (
	"encoding/json"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/switchyard/switchyard/api"
)

// schemaID names the file's schema; it is what editors are pointed at.
const schemaID = "https://switchyard.dev/schemas/flags-file.json"

// Schema is the file's JSON Schema (draft 2020-12), derived from the OpenAPI
// document's own schemas: a flag is the document's FlagInput, a segment its
// SegmentInput, an environment its EnvironmentInput, with what the file
// adds (require_approval, archived, the nesting). Unlike the API, the file
// refuses fields it does not know, so that a misspelt field is an error
// rather than a field that is silently not managed.
func Schema() ([]byte, error) {
	s, err := schema()
	if err != nil {
		return nil, err
	}
	return json.MarshalIndent(s, "", "  ")
}

func schema() (map[string]any, error) {
	raw, err := yaml.YAMLToJSON(api.OpenAPI)
	if err != nil {
		return nil, fmt.Errorf("read the OpenAPI document: %w", err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("read the OpenAPI document: %w", err)
	}
	c := converter{api: doc.Components.Schemas, defs: map[string]any{}}

	flag := c.take("FlagInput")
	flag["required"] = []any{"key"}
	props(flag)["archived"] = map[string]any{"type": "boolean",
		"description": "Whether the flag is archived (the API's archive and unarchive routes). Left out, archival is not managed."}
	flag["description"] = "A flag. A field left out is not managed by the file: what is set on the server stays."

	segment := c.take("SegmentInput")
	segment["required"] = []any{"key"}
	segment["description"] = "A segment. Without a name a new segment is named by its key."

	env := c.take("EnvironmentInput")
	env["required"] = []any{"slug"}
	props(env)["require_approval"] = c.convert(props(c.api["RequireApprovalInput"])["require_approval"])
	props(env)["segments"] = map[string]any{"type": "array", "items": map[string]any{"$ref": "#/$defs/Segment"}}
	props(env)["flags"] = map[string]any{"type": "array", "items": map[string]any{"$ref": "#/$defs/Flag"}}
	env["description"] = "An environment, identified by its slug within the project."

	project := map[string]any{
		"type":        "object",
		"description": "A project, identified by its slug. The slug is derived from the name (lowercase letters and digits, other characters a hyphen).",
		"required":    []any{"slug"},
		"properties": map[string]any{
			"slug":         map[string]any{"type": "string", "pattern": `^[a-z0-9]+(-[a-z0-9]+)*$`, "maxLength": 100},
			"name":         c.convert(props(c.api["ProjectInput"])["name"]),
			"environments": map[string]any{"type": "array", "items": map[string]any{"$ref": "#/$defs/Environment"}},
		},
	}
	for name, s := range map[string]map[string]any{"Flag": flag, "Segment": segment, "Environment": env, "Project": project} {
		s["additionalProperties"] = false
		c.defs[name] = s
	}
	return map[string]any{
		"$schema":              "https://json-schema.org/draft/2020-12/schema",
		"$id":                  schemaID,
		"title":                "Switchyard flags file",
		"type":                 "object",
		"required":             []any{"version", "projects"},
		"additionalProperties": false,
		"properties": map[string]any{
			"version":  map[string]any{"const": 1, "description": "The file format's version: 1."},
			"projects": map[string]any{"type": "array", "items": map[string]any{"$ref": "#/$defs/Project"}},
		},
		"$defs": c.defs,
	}, nil
}

func props(s map[string]any) map[string]any {
	p, _ := s["properties"].(map[string]any)
	return p
}

// converter turns OpenAPI 3.0 schemas into JSON Schema 2020-12 ones: a
// nullable type becomes a type list with "null", references point into
// $defs (each referenced schema converted once), vendor extensions go.
type converter struct {
	api  map[string]map[string]any
	defs map[string]any
}

// take is a converted copy of the document's schema name, not put in $defs.
func (c *converter) take(name string) map[string]any {
	s, ok := c.api[name]
	if !ok {
		panic("flagfile: the OpenAPI document has no schema " + name) // the embedded document is fixed at build time
	}
	return c.convert(s).(map[string]any)
}

func (c *converter) convert(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			switch {
			case strings.HasPrefix(k, "x-"), k == "nullable", k == "example", k == "readOnly":
				continue
			case k == "$ref":
				name := strings.TrimPrefix(x.(string), "#/components/schemas/")
				if _, done := c.defs[name]; !done {
					c.defs[name] = nil // mark before converting, for recursive schemas
					c.defs[name] = c.strict(c.convert(c.api[name]))
				}
				out[k] = "#/$defs/" + name
			case k == "properties":
				ps := map[string]any{}
				for name, p := range x.(map[string]any) {
					ps[name] = c.convert(p)
				}
				out[k] = ps
			default:
				out[k] = c.convert(x)
			}
		}
		if v["nullable"] == true {
			if t, ok := out["type"].(string); ok {
				out["type"] = []any{t, "null"}
			} else {
				out = map[string]any{"anyOf": []any{out, map[string]any{"type": "null"}}}
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = c.convert(x)
		}
		return out
	}
	return v
}

// strict refuses unknown fields of an object schema with properties (rules,
// conditions, variants, prerequisites).
func (c *converter) strict(v any) any {
	if s, ok := v.(map[string]any); ok && s["properties"] != nil {
		if _, set := s["additionalProperties"]; !set {
			s["additionalProperties"] = false
		}
	}
	return v
}
