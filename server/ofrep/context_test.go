package ofrep

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// docs/reference/ofrep.md, Request: the user key, the scalar attributes, and
// what is an invalid context.
func TestParseContext(t *testing.T) {
	for body, want := range map[string]evalContext{
		``:            {},
		`{}`:          {},
		`{"other":1}`: {},
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
	for _, body := range []string{
		`[1]`, `"x"`, `null`, `42`, `true`, `{"context":"x"}`, `{"context":[1]}`, `{"context":{`, `{"context":{}} x`,
		`{"context":null}`, `{"Context":null}`, ` { "context" : null } `, `{"context":{"a":1},"context":null}`, `{"context":null,"context":{"a":1}}`,
	} {
		var bad errInvalidContext
		if _, err := parseContext([]byte(body)); !errors.As(err, &bad) {
			t.Errorf("%s: err %v, want an invalid context", body, err)
		}
	}
	// A null context is refused like any other context that is not an
	// object, in the same words.
	for _, body := range []string{`{"context":null}`, `{"context":"x"}`, `{"context":[1]}`, `{"a":{"b":[1,"\u0041"]},"context":null}`} {
		if _, err := parseContext([]byte(body)); err == nil || err.Error() != "context must be a JSON object" {
			t.Errorf("%s: err %v, want \"context must be a JSON object\"", body, err)
		}
	}
}

// The bodies providers send take the fast path (else it buys nothing).
func TestScanContextReadsProviderBodies(t *testing.T) {
	for _, body := range []string{
		benchBody,
		`{}`,
		`{"context":{}}`,
		`{"context":{"targetingKey":"user-42"}}`,
		"{\n  \"context\": {\n    \"targetingKey\": \"b0a7\",\n    \"email\": \"a@example.com\",\n    \"age\": -3.5e2,\n    \"admin\": false,\n    \"tag\": null\n  }\n}",
		`{"context":{"targetingKey":"ü-user","city":"Zürich"}}`,
	} {
		got, ok := scanContext(bytes.TrimSpace([]byte(body)))
		if !ok {
			t.Errorf("%s: declined", body)
			continue
		}
		want, err := decodeContext(bytes.TrimSpace([]byte(body)))
		if err != nil {
			t.Fatal(err)
		}
		if got.user != want.user || !reflect.DeepEqual(got.attrs, want.attrs) {
			t.Errorf("%s: fast %+v, encoding/json %+v", body, got, want)
		}
	}
}

// FuzzScanContext: whatever the fast path accepts, encoding/json accepts
// with the same user and attributes (the map's nil-ness included).
func FuzzScanContext(f *testing.F) {
	for _, s := range []string{
		benchBody, ``, `{}`, `{"context":null}`, `{"context":{}}`, `{"Context":{"a":1}}`, `{"context":{"a":1},"context":{"b":2}}`,
		`{"context":{"a":1,"a":null}}`, `{"context":{"targetingKey":"x","targetingKey":7}}`, `{"context":{"a":"\u00e9"}}`,
		`{"context":{"a":1e400}}`, `{"context":{"a":01}}`, `{"context":{"a":-0.0e-0}}`, `{"x":[1],"context":{"a":true}}`,
		`{"context":{"a":"b",}}`, "{\"context\":{\"a\":\"\xff\"}}", `{"context":{"n":{"x":1}}}`, ` {"context" : { "k" : "v" } } `,
		"\v{\"context\":{}}\u00a0", `{"contextx":{},"context":{"a":false}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		raw := bytes.TrimSpace(body)
		if len(raw) == 0 {
			return
		}
		got, ok := scanContext(raw)
		if !ok {
			return
		}
		want, err := decodeContext(raw)
		if err != nil {
			t.Fatalf("%q: fast path accepted what encoding/json refuses: %v", body, err)
		}
		if got.user != want.user || !reflect.DeepEqual(got.attrs, want.attrs) {
			t.Fatalf("%q: fast %#v, encoding/json %#v", body, got, want)
		}
	})
}
