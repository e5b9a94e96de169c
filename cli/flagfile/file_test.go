package flagfile_test

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard/switchyard/cli/flagfile"
)

// Each mistake planted in testdata/mistakes.yaml is found, at its line, with
// the field named by slugs and keys.
func TestLoadFindsEachMistakeAtItsLine(t *testing.T) {
	raw, err := os.ReadFile("testdata/mistakes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, ps := flagfile.Load(raw, nil)
	got := strings.Split(strings.TrimSpace(ps.Format("mistakes.yaml")), "\n")
	want := []string{
		"mistakes.yaml:4: checkout.name: gives the slug \"check-out-now\", not \"checkout\": a project's slug is derived from its name",
		"mistakes.yaml:7: checkout.production.color: ",
		"mistakes.yaml:11: checkout.production.segments.beta-testers.rules.0.rollout_percentage: a segment's rules cannot carry a rollout",
		"mistakes.yaml:14: checkout.production.flags.new-checkout.rollout_precentage: unknown field",
		"mistakes.yaml:17: checkout.production.flags.banner.default_value: must be a string value",
		"mistakes.yaml:21: checkout.production.flags.limits.rules.0.operator: there is no operator \"in\": equals holds when the attribute equals any one of the values",
		"mistakes.yaml:24: checkout.production.flags.pattern.rules.0.values.0: ",
		"mistakes.yaml:27: checkout.production.flags.version-gate.rules.0.values.0: ",
		"mistakes.yaml:29: checkout.production.flags.too-many.rollout_percentage: ",
		"mistakes.yaml:33: checkout.production.flags.split.variants.0.weight: ",
		"mistakes.yaml:36: checkout.production.flags.gated.prerequisites.0.flag_key: names no flag of this environment: \"missing-flag\"",
		"mistakes.yaml:39: checkout.production.flags.segmented.rules.0.segment_key: names no segment of this environment: \"no-such-segment\"",
		"mistakes.yaml:40: checkout.production.flags.banner.key: \"banner\" is given twice (first at line 15)",
		"mistakes.yaml:41: checkout.production.flags.bad key.key: ",
		"mistakes.yaml:43: checkout.production.flags.tagged.tags.0: ",
	}
	for i := range got {
		if i < len(want) && strings.HasSuffix(want[i], ": ") && strings.HasPrefix(got[i], want[i]) {
			got[i] = want[i] // the schema's own wording
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s\nall:\n%s", diff, ps.Format("mistakes.yaml"))
	}
}

// A file written by Encode reads back as the same file, strings that look
// like other YAML types included.
func TestEncodeReadsBack(t *testing.T) {
	text := `version: 1
projects:
  - slug: checkout
    environments:
      - slug: production
        flags:
          - {key: limit, flag_type: string, default_value: "10", rules: [{attribute: v, operator: not_in, values: ["1.2.3", "true", "null", "0x10"]}], tags: [yes, "no"]}
          - {key: layout, flag_type: json, default_value: {cols: 3, dense: false, nested: [1, {a: b}]}}
`
	f, ps := flagfile.Load([]byte(text), nil)
	if len(ps) > 0 {
		t.Fatal(ps.Format("in"))
	}
	for _, format := range []string{"yaml", "json"} {
		out, err := flagfile.Encode(f, format)
		if err != nil {
			t.Fatal(err)
		}
		g, ps := flagfile.Load(out, nil)
		if len(ps) > 0 {
			t.Fatalf("%s:\n%s\n%s", format, out, ps.Format("out"))
		}
		again, _ := flagfile.Encode(g, format)
		if string(again) != string(out) {
			t.Errorf("%s does not read back:\n%s\nthen\n%s", format, out, again)
		}
		if format == "yaml" && !strings.Contains(string(out), `default_value: "10"`) {
			t.Errorf("a string that looks like a number is quoted:\n%s", out)
		}
	}
}
