package cli

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/switchyard/switchyard/gen/apiclient"
)

func flagsCommand(g *globals) *cobra.Command {
	return group("flags", "An environment's flags",
		flagsList(g), flagsGet(g), flagsCreate(g), flagsUpdate(g), flagsToggle(g),
		flagsAction(g, "archive", "Archive a flag (it keeps evaluating to its disabled value)"),
		flagsAction(g, "unarchive", "Unarchive a flag"),
		flagsAction(g, "delete", "Delete a flag"),
		flagsPromote(g),
	)
}

// flagTable is flags as rows.
func flagTable(fs ...apiclient.Flag) table {
	t := table{header: []string{"KEY", "TYPE", "ENABLED", "ROLLOUT", "RULES", "VERSION", "ARCHIVED"}}
	for _, f := range fs {
		rollout := "100"
		if f.RolloutPercentage != nil {
			rollout = strconv.Itoa(*f.RolloutPercentage)
		}
		t.rows = append(t.rows, []string{f.Key, string(f.FlagType), strconv.FormatBool(f.IsEnabled), rollout,
			strconv.Itoa(len(f.Rules)), strconv.FormatInt(f.Version, 10), strconv.FormatBool(f.ArchivedAt != nil)})
	}
	return t
}

func flagsList(g *globals) *cobra.Command {
	var e envFlags
	var archived bool
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List an environment's flags",
		Example: "  switchyard flags list --env production\n  switchyard flags list --env production --archived -o json",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, env, err := g.clientFor(cmd.Context(), &e)
			if err != nil {
				return err
			}
			// Active flags unless --archived: the route's default is both.
			params := &apiclient.ListFlagsParams{Archived: &archived}
			r, err := c.ListFlagsWithResponse(cmd.Context(), env, params)
			if err := answer(r, err, http.StatusOK); err != nil {
				return err
			}
			return g.print(*r.JSON200, flagTable(*r.JSON200...))
		},
	}
	e.bind(cmd)
	cmd.Flags().BoolVar(&archived, "archived", false, "list the archived flags instead")
	return cmd
}

func flagsGet(g *globals) *cobra.Command {
	var e envFlags
	cmd := &cobra.Command{
		Use:     "get KEY",
		Short:   "Show a flag",
		Example: "  switchyard flags get new-checkout --env production -o yaml",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, env, err := g.clientFor(cmd.Context(), &e)
			if err != nil {
				return err
			}
			r, err := c.GetFlagWithResponse(cmd.Context(), env, args[0])
			if err := answer(r, err, http.StatusOK); err != nil {
				return err
			}
			return g.print(*r.JSON200, flagTable(*r.JSON200))
		},
	}
	e.bind(cmd)
	return cmd
}

func flagsCreate(g *globals) *cobra.Command {
	var e envFlags
	var file, flagType string
	var enabled bool
	cmd := &cobra.Command{
		Use:   "create KEY",
		Short: "Create a flag, or replace it entirely when the key exists",
		Long: `Create a flag, or replace it entirely when the key exists (POST …/flags). The
flag's fields come from -f FILE (YAML or JSON, the API's field names); KEY,
--type and --enabled override the file's. A flag is created off unless the file
or --enabled says otherwise.`,
		Example: "  switchyard flags create new-checkout --env production\n  switchyard flags create banner --type string -f banner.yaml --env production",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			body, err := g.object(file)
			if err != nil {
				return err
			}
			body["key"] = args[0]
			if flagType != "" {
				body["flag_type"] = flagType
			}
			if _, ok := body["is_enabled"]; !ok || cmd.Flags().Changed("enabled") {
				body["is_enabled"] = enabled // a new flag is off unless said otherwise
			}
			c, env, err := g.clientFor(cmd.Context(), &e)
			if err != nil {
				return err
			}
			req, err := jsonBody(body)
			if err != nil {
				return err
			}
			r, err := c.PutFlagWithBodyWithResponse(cmd.Context(), env, "application/json", req)
			if err != nil {
				return err
			}
			return g.flagWritten(r, r.Body, r.JSON200, nil)
		},
	}
	e.bind(cmd)
	cmd.Flags().StringVarP(&file, "file", "f", "", "the flag's fields, YAML or JSON")
	cmd.Flags().StringVar(&flagType, "type", "", "flag_type: boolean, string, integer or json (boolean when neither it nor the file says)")
	cmd.Flags().BoolVar(&enabled, "enabled", false, "is_enabled")
	return cmd
}

func flagsUpdate(g *globals) *cobra.Command {
	var e envFlags
	var file, patch string
	cmd := &cobra.Command{
		Use:   "update KEY",
		Short: "Change a flag with a merge patch",
		Long: `Change a flag with a JSON merge patch (RFC 7396): the fields given change, null
clears a field, the rest stay. The patch is --patch (YAML or JSON inline) or -f FILE.
In an environment that requires approval it opens a change request instead.`,
		Example: `  switchyard flags update new-checkout --env production --patch '{rollout_percentage: 25}'
  switchyard flags update new-checkout --env production -f patch.yaml`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var body map[string]any
			var err error
			switch {
			case (file == "") == (patch == ""):
				return usagef("give exactly one of --patch and -f")
			case file != "":
				if body, err = g.object(file); err != nil {
					return err
				}
			default:
				if err := yaml.Unmarshal([]byte(patch), &body); err != nil || body == nil {
					return usagef("--patch: want a YAML or JSON object: %v", err)
				}
			}
			return g.patchFlag(cmd.Context(), &e, args[0], body)
		},
	}
	e.bind(cmd)
	cmd.Flags().StringVarP(&file, "file", "f", "", "the merge patch, YAML or JSON")
	cmd.Flags().StringVar(&patch, "patch", "", "the merge patch inline, YAML or JSON")
	return cmd
}

func flagsToggle(g *globals) *cobra.Command {
	var e envFlags
	cmd := &cobra.Command{
		Use:       "toggle KEY on|off",
		Short:     "Turn a flag on or off (is_enabled)",
		Example:   "  switchyard flags toggle new-checkout off --env production",
		Args:      exactArgs(2),
		ValidArgs: []string{"on", "off"},
		RunE: func(cmd *cobra.Command, args []string) error {
			on, ok := map[string]bool{"on": true, "off": false}[args[1]]
			if !ok {
				return usagef("toggle: want on or off, got %q", args[1])
			}
			return g.patchFlag(cmd.Context(), &e, args[0], map[string]any{"is_enabled": on})
		},
	}
	e.bind(cmd)
	return cmd
}

func (g *globals) patchFlag(ctx context.Context, e *envFlags, key string, patch map[string]any) error {
	r, err := g.sendFlagPatch(ctx, e, key, patch)
	if err != nil {
		return err
	}
	return g.flagWritten(r, r.Body, r.JSON200, r.JSON202)
}

// sendFlagPatch sends a merge patch of the flag key in the environment e
// names, and returns the answer as it came.
func (g *globals) sendFlagPatch(ctx context.Context, e *envFlags, key string, patch map[string]any) (*apiclient.PatchFlagResponse, error) {
	c, env, err := g.clientFor(ctx, e)
	if err != nil {
		return nil, err
	}
	req, err := jsonBody(patch)
	if err != nil {
		return nil, err
	}
	return c.PatchFlagWithBodyWithResponse(ctx, env, key, "application/merge-patch+json", req)
}

// flagsAction is a write of one flag by key that answers the flag (archive,
// unarchive) or nothing (delete).
func flagsAction(g *globals, name, short string) *cobra.Command {
	var e envFlags
	cmd := &cobra.Command{
		Use:     name + " KEY",
		Short:   short,
		Example: fmt.Sprintf("  switchyard flags %s old-banner --env production", name),
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, env, err := g.clientFor(cmd.Context(), &e)
			if err != nil {
				return err
			}
			ctx, key := cmd.Context(), args[0]
			switch name {
			case "archive":
				r, err := c.ArchiveFlagWithResponse(ctx, env, key)
				if err != nil {
					return err
				}
				return g.flagWritten(r, r.Body, r.JSON200, nil)
			case "unarchive":
				r, err := c.UnarchiveFlagWithResponse(ctx, env, key)
				if err != nil {
					return err
				}
				return g.flagWritten(r, r.Body, r.JSON200, nil)
			}
			r, err := c.DeleteFlagWithResponse(ctx, env, key)
			if err := answer(r, err, http.StatusNoContent); err != nil {
				return err
			}
			fmt.Fprintf(g.out, "deleted %s\n", key)
			return nil
		},
	}
	e.bind(cmd)
	return cmd
}

func flagsPromote(g *globals) *cobra.Command {
	var e envFlags
	var to string
	cmd := &cobra.Command{
		Use:     "promote KEY --env FROM --to TO",
		Short:   "Copy a flag's configuration to another environment of the project",
		Example: "  switchyard flags promote new-checkout --env staging --to production",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if to == "" {
				return usagef("--to is required")
			}
			c, env, err := g.clientFor(cmd.Context(), &e)
			if err != nil {
				return err
			}
			target := envFlags{project: e.project, env: to}
			toID, err := target.resolve(cmd.Context(), g)
			if err != nil {
				return err
			}
			r, err := c.PromoteFlagWithResponse(cmd.Context(), env, args[0], apiclient.PromoteInput{TargetEnvId: toID})
			if err != nil {
				return err
			}
			return g.flagWritten(r, r.Body, r.JSON200, nil)
		},
	}
	e.bind(cmd)
	cmd.Flags().StringVar(&to, "to", "", "the target environment's slug (or id)")
	return cmd
}

// flagWritten prints the flag a write answered, or the change request it
// opened in an environment that requires approval.
func (g *globals) flagWritten(r response, body []byte, flag *apiclient.Flag, cr *apiclient.ChangeRequest) error {
	written, opened, err := flagWrite(r, body, flag, cr)
	if err != nil {
		return err
	}
	if opened != nil {
		return g.changeRequestOpened(*opened)
	}
	return g.print(*written, flagTable(*written))
}

// flagWrite reads the answer to a write of a flag: the flag written, or
// the change request opened instead in an environment that requires
// approval, or the server's refusal.
func flagWrite(r response, body []byte, flag *apiclient.Flag, cr *apiclient.ChangeRequest) (*apiclient.Flag, *apiclient.ChangeRequest, error) {
	if r.StatusCode() == http.StatusAccepted && cr != nil {
		return nil, cr, nil
	}
	if err := expect(r, body, http.StatusOK); err != nil {
		return nil, nil, err
	}
	return flag, nil, nil
}

// changeRequestOpened prints a change request that a write opened instead
// of writing.
func (g *globals) changeRequestOpened(cr apiclient.ChangeRequest) error {
	if g.output == "json" || g.output == "yaml" {
		return g.print(cr, table{})
	}
	_, err := fmt.Fprintf(g.out, "change request %d opened: the environment requires approval\n", cr.Id)
	return err
}

// clientFor is the client and the environment e names.
func (g *globals) clientFor(ctx context.Context, e *envFlags) (*apiclient.ClientWithResponses, uuid.UUID, error) {
	env, err := e.resolve(ctx, g)
	if err != nil {
		return nil, uuid.Nil, err
	}
	c, err := g.client()
	return c, env, err
}
