package ofrep

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// extensions.md, Request: the user key, the scalar attributes, and what is
// an invalid context.
func TestParseContext(t *testing.T) {
	for body, want := range map[string]evalContext{
		``:                 {},
		`{}`:               {},
		`{"context":null}`: {},
		`{"other":1}`:      {},
		`{"context":{"targetingKey":"u1","plan":"pro","age":30,"beta":true,"nested":{"a":1},"list":[1],"nothing":null}}`: {
			user: "u1", attrs: map[string]any{"plan": "pro", "age": 30.0, "beta": true}},
		`{"context":{"targetingKey":7,"plan":"pro"}}`: {attrs: map[string]any{"plan": "pro"}},
	} {
		got, err := parseContext([]byte(body))
		if err != nil {
			t.Errorf("%s: %v", body, err)
			continue
		}
		if got.user != want.user || (len(got.attrs) > 0 || len(want.attrs) > 0) && cmp.Diff(want.attrs, got.attrs) != "" {
			t.Errorf("%s = %+v, want %+v", body, got, want)
		}
	}
	for _, body := range []string{`[1]`, `"x"`, `{"context":"x"}`, `{"context":[1]}`, `{"context":{`, `{"context":{}} x`} {
		var bad errInvalidContext
		if _, err := parseContext([]byte(body)); !errors.As(err, &bad) {
			t.Errorf("%s: err %v, want an invalid context", body, err)
		}
	}
}
