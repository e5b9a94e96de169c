package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"sigs.k8s.io/yaml"
)

// object reads the YAML or JSON object of file ("-": stdin), or starts
// from an empty one when file is "".
func (g *globals) object(file string) (map[string]any, error) {
	out := map[string]any{}
	if file == "" {
		return out, nil
	}
	var raw []byte
	var err error
	if file == "-" {
		raw, err = io.ReadAll(g.in)
	} else {
		raw, err = os.ReadFile(file)
	}
	if err != nil {
		return nil, err
	}
	if err := yaml.Unmarshal(raw, &out); err != nil || out == nil {
		return nil, fmt.Errorf("%s: want a YAML or JSON object: %v", file, err)
	}
	return out, nil
}

// jsonBody is v as a request body.
func jsonBody(v any) (io.Reader, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return bytes.NewReader(raw), nil
}
