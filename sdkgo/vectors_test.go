package sdkgo_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard/switchyard/sdkgo/eval"
)

// vectorFile is one file of evaluation test vectors (docs/reference/evaluation.md, Test
// vectors).
type vectorFile struct {
	Name  string       `json:"name"`
	Flags []eval.Flag  `json:"flags"`
	Cases []vectorCase `json:"cases"`
}

type vectorCase struct {
	Name       string          `json:"name"`
	FlagKey    string          `json:"flag_key"`
	UserKey    string          `json:"user_key"`
	Attributes map[string]any  `json:"attributes"`
	Expected   json.RawMessage `json:"expected"`
}

// TestVectors runs every *.json file of testdata/vectors and, when EVAL_VECTORS_DIR is set,
// of that folder too, with one subtest per file and case (docs/reference/evaluation.md, Test
// vectors).
func TestVectors(t *testing.T) {
	dirs := []string{filepath.Join("testdata", "vectors")}
	if dir := os.Getenv("EVAL_VECTORS_DIR"); dir != "" {
		dirs = append(dirs, dir)
	}
	total := 0
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.json"))
		if err != nil {
			t.Fatalf("list vectors in %s: %v", dir, err)
		}
		if len(files) == 0 {
			t.Fatalf("no *.json vector files in %s", dir)
		}
		sort.Strings(files)
		for _, file := range files {
			total += runVectorFile(t, file)
		}
	}
	t.Logf("%d vector cases", total)
}

func runVectorFile(t *testing.T, file string) int {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("read %s: %v", file, err)
	}
	var vf vectorFile
	if err := json.Unmarshal(data, &vf); err != nil {
		t.Fatalf("decode %s: %v", file, err)
	}
	if len(vf.Cases) == 0 {
		t.Fatalf("%s has no cases", file)
	}
	snap := eval.Compile(vf.Flags)
	t.Run(filepath.Base(file), func(t *testing.T) {
		for _, c := range vf.Cases {
			t.Run(c.Name, func(t *testing.T) {
				var want any
				if err := json.Unmarshal(c.Expected, &want); err != nil {
					t.Fatalf("%s: case %q: decode expected %s: %v", file, c.Name, c.Expected, err)
				}
				res := snap.Evaluate(c.FlagKey, c.UserKey, c.Attributes)
				got := asJSONValue(t, res.Value)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s: case %q: flag %q user %q: expected %s, got %s (reason %s, rule %d, variant %d)\n(-expected +got):\n%s",
						file, c.Name, c.FlagKey, c.UserKey, c.Expected, mustJSON(t, res.Value),
						res.Reason, res.RuleIndex, res.VariantIndex, diff)
				}
			})
		}
	})
	return len(vf.Cases)
}

// asJSONValue turns a result into the value a JSON decoder gives for it, so that results are
// compared as JSON values (1 and 1.0 alike).
func asJSONValue(t *testing.T, v any) any {
	t.Helper()
	var out any
	if err := json.Unmarshal(mustJSON(t, v), &out); err != nil {
		t.Fatalf("re-decode %v: %v", v, err)
	}
	return out
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encode %v: %v", v, err)
	}
	return b
}
