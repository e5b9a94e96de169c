package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/switchyard/switchyard/cli/flagfile"
	"github.com/switchyard/switchyard/cli/plan"
	"github.com/switchyard/switchyard/gen/apiclient"
)

// readFile reads a flags file, or stdin for "-".
func (g *globals) readFile(file string) ([]byte, error) {
	if file == "" {
		return nil, usagef("-f FILE is required (- reads stdin)")
	}
	if file == "-" {
		return io.ReadAll(g.in)
	}
	return os.ReadFile(file)
}

// problems prints a file's problems and ends the command with exit 1.
func (g *globals) problems(file string, ps flagfile.Problems) error {
	if file == "-" {
		file = "<stdin>"
	}
	fmt.Fprint(g.errOut, ps.Format(file))
	return exitStatus(ExitError)
}

func validateCommand(g *globals) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "validate -f FILE",
		Short: "Check a flags file without a server",
		Long: `Check a flags file (YAML or JSON) without a server: its schema (switchyard schema)
and every rule the server checks on a write: value types, operators, regular
expressions, semantic versions, weights, and that the segments and prerequisite
flags a flag names are in the same environment of the file. Each problem is
printed as FILE:LINE: field: message; the exit code is 1 when there is any.`,
		Example: "  switchyard validate -f flags.yaml",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			raw, err := g.readFile(file)
			if err != nil {
				return err
			}
			f, ps := flagfile.Load(raw, nil)
			if len(ps) > 0 {
				return g.problems(file, ps)
			}
			flags := 0
			for _, p := range f.Projects {
				for _, e := range p.Environments {
					flags += len(e.Flags)
				}
			}
			_, err = fmt.Fprintf(g.out, "%s is valid: %d project(s), %d flag(s)\n", file, len(f.Projects), flags)
			return err
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "the flags file (- for stdin)")
	return cmd
}

// planned is a file read, checked against the server and planned.
type planned struct {
	client *apiclient.ClientWithResponses
	state  plan.State
	plan   plan.Plan
}

// makePlan reads the file and the server, checks the file against what the
// server holds, and plans.
func (g *globals) makePlan(ctx context.Context, file string, prune bool) (planned, error) {
	raw, err := g.readFile(file)
	if err != nil {
		return planned{}, err
	}
	f, ps := flagfile.Parse(raw)
	if len(ps) > 0 {
		return planned{}, g.problems(file, ps)
	}
	c, err := g.client()
	if err != nil {
		return planned{}, err
	}
	s, err := readState(ctx, c, f)
	if err != nil {
		return planned{}, err
	}
	if ps := flagfile.Check(f, serverState(s)); len(ps) > 0 {
		return planned{}, g.problems(file, ps)
	}
	p, err := plan.Make(f, s, prune)
	if err != nil {
		return planned{}, err
	}
	return planned{client: c, state: s, plan: p}, nil
}

// printPlan writes the plan as text, or as JSON or YAML steps.
func (g *globals) printPlan(p plan.Plan) error {
	if g.output == "json" || g.output == "yaml" {
		return g.print(p, table{})
	}
	_, err := io.WriteString(g.out, p.Text())
	return err
}

func diffCommand(g *globals) *cobra.Command {
	var file string
	var prune bool
	cmd := &cobra.Command{
		Use:   "diff -f FILE [--prune]",
		Short: "Show what apply would create, change and delete",
		Long: `Show, field by field, what apply would create, change or (with --prune) delete
to make the server hold what the file says. Fields the file leaves out are not
managed and never shown. The exit code is 0 when there is nothing to do, 2 when
there are changes, 1 on an error: in CI, run it on a pull request and post its
output as a comment.`,
		Example: "  switchyard diff -f flags.yaml\n  switchyard diff -f flags.yaml --prune -o json",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pl, err := g.makePlan(cmd.Context(), file, prune)
			if err != nil {
				return err
			}
			if err := g.printPlan(pl.plan); err != nil {
				return err
			}
			if !pl.plan.Empty() {
				return exitStatus(ExitChanges)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "the flags file (- for stdin)")
	cmd.Flags().BoolVar(&prune, "prune", false, "also delete the flags and segments of the file's environments that the file does not name")
	return cmd
}

func applyCommand(g *globals) *cobra.Command {
	var file string
	var prune, yes bool
	cmd := &cobra.Command{
		Use:   "apply -f FILE [--prune] [--yes]",
		Short: "Make the server hold what a flags file says",
		Long: `Make the server hold what the file says, through the ordinary routes (versions,
audit trail, stream and webhooks as for any write), in dependency order:
projects and environments, segments, then flags after the flags they name as
prerequisites. It prints the plan and asks before writing unless --yes is given,
and stops at the first refusal, saying what was done.

In an environment that requires approval a flag change opens a change request
instead; apply lists them and exits 3. Once they are approved, the same apply
finds nothing to do. Applying the same file again makes no write.`,
		Example: "  switchyard apply -f flags.yaml\n  switchyard apply -f flags.yaml --prune --yes",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			pl, err := g.makePlan(ctx, file, prune)
			if err != nil {
				return err
			}
			if pl.plan.Empty() {
				return g.printPlan(pl.plan)
			}
			var refused []string
			for _, s := range pl.plan.Steps {
				if s.Refused != "" {
					refused = append(refused, fmt.Sprintf("  %s: %s", s.Resource(), s.Refused))
				}
			}
			if len(refused) > 0 {
				return fmt.Errorf("the server would refuse these steps; nothing was written:\n%s", strings.Join(refused, "\n"))
			}
			if !yes {
				if err := g.printPlan(pl.plan); err != nil {
					return err
				}
				if !g.confirm("Apply these changes? Only yes applies: ") {
					return fmt.Errorf("not applied: answer yes, or give --yes")
				}
			}
			did, err := newExecutor(pl.client, pl.state).run(ctx, pl.plan)
			if perr := g.printApplied(did); perr != nil {
				return perr
			}
			if err != nil {
				return fmt.Errorf("stopped at %w", err)
			}
			for _, d := range did {
				if d.changeRequest != 0 {
					return exitStatus(ExitPending)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "the flags file (- for stdin)")
	cmd.Flags().BoolVar(&prune, "prune", false, "also delete the flags and segments of the file's environments that the file does not name")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "apply without asking")
	return cmd
}

// confirm asks on stdin; only "yes" agrees.
func (g *globals) confirm(question string) bool {
	fmt.Fprint(g.out, question)
	line, _ := bufio.NewReader(g.in).ReadString('\n')
	return strings.TrimSpace(line) == "yes"
}

// printApplied lists what apply did, and the change requests waiting.
func (g *globals) printApplied(did []done) error {
	if g.output == "json" || g.output == "yaml" {
		type item struct {
			plan.Step
			ChangeRequestID int64 `json:"change_request_id,omitempty"`
		}
		items := make([]item, len(did))
		for i, d := range did {
			items[i] = item{Step: d.step, ChangeRequestID: d.changeRequest}
		}
		return g.print(items, table{})
	}
	var waiting []string
	for _, d := range did {
		switch {
		case d.step.Pending != 0:
			waiting = append(waiting, fmt.Sprintf("  change request %d (already pending): %s", d.changeRequest, d.step.Resource()))
		case d.changeRequest != 0:
			waiting = append(waiting, fmt.Sprintf("  change request %d opened: %s", d.changeRequest, d.step.Resource()))
		default:
			fmt.Fprintf(g.out, "%s: %s\n", d.step.Op, d.step.Resource())
		}
	}
	if len(waiting) > 0 {
		sort.Strings(waiting)
		fmt.Fprintf(g.out, "Waiting for approval (switchyard change-requests list --env ENV):\n%s\n", strings.Join(waiting, "\n"))
	}
	return nil
}

func schemaCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "schema",
		Short: "Print the flags file's JSON Schema",
		Long: `Print the JSON Schema of the flags file, derived from the API's own schemas, for
editors' completion and checks. With the YAML language server, put the file's
path in the first line of a flags file:
  # yaml-language-server: $schema=./flags.schema.json`,
		Example: "  switchyard schema > flags.schema.json",
		Args:    noArgs,
		RunE: func(*cobra.Command, []string) error {
			s, err := flagfile.Schema()
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(g.out, "%s\n", s)
			return err
		},
	}
}
