package cli

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/switchyard/switchyard/gen/apiclient"
)

func segmentsCommand(g *globals) *cobra.Command {
	return group("segments", "An environment's segments", segmentsList(g), segmentsGet(g), segmentsCreate(g), segmentsUpdate(g), segmentsDelete(g))
}

func segmentTable(ss ...apiclient.Segment) table {
	t := table{header: []string{"KEY", "NAME", "RULES"}}
	for _, s := range ss {
		t.rows = append(t.rows, []string{s.Key, s.Name, strconv.Itoa(len(s.Rules))})
	}
	return t
}

func segmentsList(g *globals) *cobra.Command {
	var e envFlags
	cmd := &cobra.Command{
		Use: "list", Short: "List an environment's segments", Args: noArgs,
		Example: "  switchyard segments list --env production",
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, env, err := g.clientFor(cmd.Context(), &e)
			if err != nil {
				return err
			}
			r, err := c.ListSegmentsWithResponse(cmd.Context(), env)
			if err := answer(r, err, http.StatusOK); err != nil {
				return err
			}
			return g.print(*r.JSON200, segmentTable(*r.JSON200...))
		},
	}
	e.bind(cmd)
	return cmd
}

func segmentsGet(g *globals) *cobra.Command {
	var e envFlags
	cmd := &cobra.Command{
		Use: "get KEY", Short: "Show a segment", Args: exactArgs(1),
		Example: "  switchyard segments get beta-testers --env production -o yaml",
		RunE: func(cmd *cobra.Command, args []string) error {
			c, env, err := g.clientFor(cmd.Context(), &e)
			if err != nil {
				return err
			}
			r, err := c.GetSegmentWithResponse(cmd.Context(), env, args[0])
			if err != nil {
				return err
			}
			return g.segmentWritten(r, r.Body, r.JSON200)
		},
	}
	e.bind(cmd)
	return cmd
}

func segmentsCreate(g *globals) *cobra.Command {
	var e envFlags
	var file, name string
	cmd := &cobra.Command{
		Use:   "create KEY --name NAME [-f FILE]",
		Short: "Create a segment",
		Long: `Create a segment (POST …/segments). Its rules and description come from -f FILE
(YAML or JSON, the API's field names); KEY and --name override the file's.`,
		Example: "  switchyard segments create beta-testers --name 'Beta testers' -f beta.yaml --env production",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			body, err := g.object(file)
			if err != nil {
				return err
			}
			body["key"] = args[0]
			if name != "" {
				body["name"] = name
			}
			c, env, err := g.clientFor(cmd.Context(), &e)
			if err != nil {
				return err
			}
			req, err := jsonBody(body)
			if err != nil {
				return err
			}
			r, err := c.CreateSegmentWithBodyWithResponse(cmd.Context(), env, "application/json", req)
			if err != nil {
				return err
			}
			return g.segmentWritten(r, r.Body, r.JSON200)
		},
	}
	e.bind(cmd)
	cmd.Flags().StringVarP(&file, "file", "f", "", "the segment's fields, YAML or JSON")
	cmd.Flags().StringVar(&name, "name", "", "the segment's name")
	return cmd
}

func segmentsUpdate(g *globals) *cobra.Command {
	var e envFlags
	var patch string
	cmd := &cobra.Command{
		Use:     "update KEY --patch PATCH",
		Short:   "Change a segment: the fields given (name, description, rules) replace its own",
		Example: `  switchyard segments update beta-testers --env production --patch '{name: Beta}'`,
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var body map[string]any
			if err := yaml.Unmarshal([]byte(patch), &body); err != nil || body == nil {
				return usagef("--patch: want a YAML or JSON object")
			}
			c, env, err := g.clientFor(cmd.Context(), &e)
			if err != nil {
				return err
			}
			req, err := jsonBody(body)
			if err != nil {
				return err
			}
			r, err := c.PatchSegmentWithBodyWithResponse(cmd.Context(), env, args[0], "application/json", req)
			if err != nil {
				return err
			}
			return g.segmentWritten(r, r.Body, r.JSON200)
		},
	}
	e.bind(cmd)
	cmd.Flags().StringVar(&patch, "patch", "", "the merge patch, YAML or JSON")
	return cmd
}

func segmentsDelete(g *globals) *cobra.Command {
	var e envFlags
	cmd := &cobra.Command{
		Use: "delete KEY", Short: "Delete a segment (the rules of flags that named it lose it)", Args: exactArgs(1),
		Example: "  switchyard segments delete beta-testers --env production",
		RunE: func(cmd *cobra.Command, args []string) error {
			c, env, err := g.clientFor(cmd.Context(), &e)
			if err != nil {
				return err
			}
			r, err := c.DeleteSegmentWithResponse(cmd.Context(), env, args[0])
			if err := answer(r, err, http.StatusNoContent); err != nil {
				return err
			}
			_, err = fmt.Fprintf(g.out, "deleted %s\n", args[0])
			return err
		},
	}
	e.bind(cmd)
	return cmd
}

func (g *globals) segmentWritten(r response, body []byte, s *apiclient.Segment) error {
	if err := expect(r, body, http.StatusOK); err != nil {
		return err
	}
	return g.print(*s, segmentTable(*s))
}
