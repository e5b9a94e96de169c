package core

import (
	"bytes"
	"encoding/json"

	"github.com/switchyard/switchyard/server/apperr"
)

// applyMergePatch applies an RFC 7396 JSON merge patch to a JSON document.
// It is the one merge-patch function: direct PATCH, scheduled changes and
// approved change requests all end here (through applyFlagPatch). Numbers
// keep their exact text (json.Number), so nothing is rounded on the way.
func applyMergePatch(doc, patch []byte) ([]byte, error) {
	target, err := decodeJSON(doc)
	if err != nil {
		return nil, err
	}
	p, err := decodeJSON(patch)
	if err != nil {
		return nil, apperr.Wrap(apperr.BadRequest, "the patch is not valid JSON", err)
	}
	return json.Marshal(mergeValue(target, p))
}

// mergeValue is RFC 7396's MergePatch(Target, Patch).
func mergeValue(target, patch any) any {
	po, ok := patch.(map[string]any)
	if !ok {
		return patch // a non-object patch replaces the target whole
	}
	to, ok := target.(map[string]any)
	if !ok {
		to = map[string]any{}
	}
	for k, v := range po {
		if v == nil {
			delete(to, k)
			continue
		}
		to[k] = mergeValue(to[k], v)
	}
	return to
}

func decodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, apperr.E(apperr.BadRequest, "trailing data after the JSON value")
	}
	return v, nil
}
