package core

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The examples of RFC 7396, Appendix A.
func TestApplyMergePatchRFCExamples(t *testing.T) {
	cases := []struct{ target, patch, want string }{
		{`{"a":"b"}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"b"}`, `{"b":"c"}`, `{"a":"b","b":"c"}`},
		{`{"a":"b"}`, `{"a":null}`, `{}`},
		{`{"a":"b","b":"c"}`, `{"a":null}`, `{"b":"c"}`},
		{`{"a":["b"]}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"c"}`, `{"a":["b"]}`, `{"a":["b"]}`},
		{`{"a":{"b":"c"}}`, `{"a":{"b":"d","c":null}}`, `{"a":{"b":"d"}}`},
		{`{"a":[{"b":"c"}]}`, `{"a":[1]}`, `{"a":[1]}`},
		{`["a","b"]`, `["c","d"]`, `["c","d"]`},
		{`{"a":"b"}`, `["c"]`, `["c"]`},
		{`{"a":"foo"}`, `null`, `null`},
		{`{"a":"foo"}`, `"bar"`, `"bar"`},
		{`{"e":null}`, `{"a":1}`, `{"a":1,"e":null}`},
		{`[1,2]`, `{"a":"b","c":null}`, `{"a":"b"}`},
		{`{}`, `{"a":{"bb":{"ccc":null}}}`, `{"a":{"bb":{}}}`},
		{`{"n":1}`, `{"big":12345678901234567890}`, `{"big":12345678901234567890,"n":1}`},
	}
	for _, c := range cases {
		got, err := applyMergePatch([]byte(c.target), []byte(c.patch))
		if err != nil {
			t.Fatalf("%s + %s: %v", c.target, c.patch, err)
		}
		var g, w any
		_ = json.Unmarshal(got, &g)
		_ = json.Unmarshal([]byte(c.want), &w)
		if d := cmp.Diff(w, g); d != "" {
			t.Errorf("%s + %s (-want +got):\n%s", c.target, c.patch, d)
		}
	}
}

// FuzzApplyMergePatch: never panics; applying a patch twice equals applying
// it once (merge patches are idempotent).
func FuzzApplyMergePatch(f *testing.F) {
	f.Add([]byte(`{"a":"b","c":{"d":1}}`), []byte(`{"c":{"d":null,"e":[1]}}`))
	f.Add([]byte(`[]`), []byte(`{"a":null}`))
	f.Add([]byte(`{}`), []byte(`1e1000`)) // valid JSON beyond float64: numbers stay as written
	f.Fuzz(func(t *testing.T, doc, patch []byte) {
		once, err := applyMergePatch(doc, patch)
		if err != nil {
			return
		}
		twice, err := applyMergePatch(once, patch)
		if err != nil {
			t.Fatalf("second application failed: %v", err)
		}
		a, errA := decodeJSON(once)
		b, errB := decodeJSON(twice)
		if errA != nil || errB != nil {
			t.Fatalf("result is not JSON: %s", once)
		}
		if d := cmp.Diff(a, b); d != "" {
			t.Fatalf("not idempotent (-once +twice):\n%s", d)
		}
	})
}
