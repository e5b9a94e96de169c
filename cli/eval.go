package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/switchyard/switchyard/gen/apiclient"
	"github.com/switchyard/switchyard/sdkgo/eval"
)

func evalCommand(g *globals) *cobra.Command {
	var e envFlags
	var user string
	var attrs []string
	cmd := &cobra.Command{
		Use:   "eval FLAG --env ENV [--user KEY] [--attr name=value]...",
		Short: "Evaluate a flag here, with the SDKs' evaluator, for a user you describe",
		Long: `Evaluate a flag locally with the evaluator the SDKs use, against the environment's
flags and segments as the server holds them now, for the user --user (anonymous
when not given) with the attributes --attr. It prints the value, the reason, and
the rule that matched. The attributes never leave this machine.

An attribute's value that reads as a JSON number, true, false or null is passed
as one; anything else is a string (quote a number to pass it as a string:
--attr 'code="42"').`,
		Example: "  switchyard eval new-checkout --env production --user u-123 --attr plan=enterprise --attr age=42",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			values, err := parseAttrs(attrs)
			if err != nil {
				return err
			}
			c, env, err := g.clientFor(cmd.Context(), &e)
			if err != nil {
				return err
			}
			flags, segments, err := evaluationData(cmd.Context(), c, env)
			if err != nil {
				return err
			}
			key := args[0]
			expanded := make([]eval.Flag, len(flags))
			for i, f := range flags {
				expanded[i] = eval.ExpandSegments(f, segments)
			}
			res := eval.Compile(expanded).Evaluate(key, user, values)
			out := evalAnswer{Flag: key, Value: res.Value, Reason: string(res.Reason)}
			if res.Reason == eval.ReasonRuleMatch {
				for _, f := range flags {
					if f.Key == key {
						out.Rule = originalRule(f, segments, res.RuleIndex)
					}
				}
			}
			value, err := json.Marshal(res.Value)
			if err != nil {
				return err
			}
			rule := ""
			if out.Rule != nil {
				rule = out.Rule.String()
			}
			return g.print(out, table{header: []string{"FLAG", "VALUE", "REASON", "RULE"}, rows: [][]string{{key, string(value), out.Reason, rule}}})
		},
	}
	e.bind(cmd)
	cmd.Flags().StringVar(&user, "user", "", "the user's key (anonymous when not given)")
	cmd.Flags().StringArrayVar(&attrs, "attr", nil, "an attribute, name=value (repeat for more)")
	return cmd
}

// evalAnswer is what eval prints.
type evalAnswer struct {
	Flag   string       `json:"flag"`
	Value  any          `json:"value"`
	Reason string       `json:"reason"`
	Rule   *matchedRule `json:"rule,omitempty"`
}

// matchedRule names the rule of the flag that matched: its index, and the
// segment and the index of the segment's rule when it matched through one.
type matchedRule struct {
	Index        int    `json:"index"`
	Segment      string `json:"segment,omitempty"`
	SegmentIndex *int   `json:"segment_rule_index,omitempty"`
}

func (m matchedRule) String() string {
	s := fmt.Sprintf("rules.%d", m.Index)
	if m.Segment != "" {
		s += fmt.Sprintf(" (segment %s, its rule %d)", m.Segment, *m.SegmentIndex)
	}
	return s
}

// originalRule maps the index of a rule of the expanded flag back to the
// flag's own rule (eval.ExpandSegments expands each rule that names a
// segment into one rule per segment rule, in place).
func originalRule(f eval.Flag, segments map[string][]eval.Rule, expanded int) *matchedRule {
	at := 0
	for i, r := range f.Rules {
		if r.SegmentKey == nil || *r.SegmentKey == "" {
			if at == expanded {
				return &matchedRule{Index: i}
			}
			at++
			continue
		}
		n := len(segments[*r.SegmentKey])
		if expanded < at+n {
			j := expanded - at
			return &matchedRule{Index: i, Segment: *r.SegmentKey, SegmentIndex: &j}
		}
		at += n
	}
	return nil
}

// evaluationData reads the environment's flags, as stored, and its
// segments' rules by key.
func evaluationData(ctx context.Context, c *apiclient.ClientWithResponses, env uuid.UUID) ([]eval.Flag, map[string][]eval.Rule, error) {
	fr, err := c.ListFlagsWithResponse(ctx, env, &apiclient.ListFlagsParams{})
	if err != nil {
		return nil, nil, err
	}
	if err := expect(fr, fr.Body, http.StatusOK); err != nil {
		return nil, nil, err
	}
	sr, err := c.ListSegmentsWithResponse(ctx, env)
	if err != nil {
		return nil, nil, err
	}
	if err := expect(sr, sr.Body, http.StatusOK); err != nil {
		return nil, nil, err
	}
	// The API's objects carry the evaluator's fields under the same names.
	var raw []eval.Flag
	if err := json.Unmarshal(fr.Body, &raw); err != nil {
		return nil, nil, fmt.Errorf("read the flags: %w", err)
	}
	var segs []struct {
		Key   string      `json:"key"`
		Rules []eval.Rule `json:"rules"`
	}
	if err := json.Unmarshal(sr.Body, &segs); err != nil {
		return nil, nil, fmt.Errorf("read the segments: %w", err)
	}
	segments := make(map[string][]eval.Rule, len(segs))
	for _, s := range segs {
		segments[s.Key] = s.Rules
	}
	return raw, segments, nil
}

// parseAttrs reads name=value attributes.
func parseAttrs(attrs []string) (map[string]any, error) {
	out := make(map[string]any, len(attrs))
	for _, a := range attrs {
		name, value, ok := strings.Cut(a, "=")
		if !ok || name == "" {
			return nil, usagef("--attr %q: want name=value", a)
		}
		var v any
		if err := json.Unmarshal([]byte(value), &v); err != nil {
			v = value
		} else if _, isObject := v.(map[string]any); isObject {
			v = value
		} else if _, isList := v.([]any); isList {
			v = value
		}
		out[name] = v
	}
	return out, nil
}
