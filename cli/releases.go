package cli

import (
	"context"
	"fmt"
	"net/http"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/switchyard/switchyard/gen/apiclient"
)

func releasesCommand(g *globals) *cobra.Command {
	return group("releases", "Guarded releases: rollouts that watch their metrics and roll themselves back",
		releasesStart(g), releasesList(g), releasesGet(g),
		releasesAction(g, "pause", "Pause a running release (it keeps guarding)"),
		releasesAction(g, "resume", "Resume a paused release"),
		releasesAction(g, "rollback", "Roll a release back: the flag's rollout becomes 0"),
		releasesAction(g, "cancel", "Cancel a release: guarding stops, the flag stays as it is"),
	)
}

func releaseTable(rs ...apiclient.Release) table {
	t := table{header: []string{"ID", "FLAG", "STATUS", "STAGE", "PERCENTAGE", "STARTED"}}
	for _, r := range rs {
		pct := ""
		if r.StageIndex < len(r.Stages) {
			pct = fmt.Sprint(r.Stages[r.StageIndex].Percentage)
		}
		t.rows = append(t.rows, []string{r.Id.String(), r.FlagKey, string(r.Status),
			fmt.Sprintf("%d of %d", r.StageIndex+1, len(r.Stages)), pct, r.StartedAt.Format("2006-01-02 15:04")})
	}
	return t
}

func releasesStart(g *globals) *cobra.Command {
	var e envFlags
	var file string
	cmd := &cobra.Command{
		Use:   "start FLAG -f FILE",
		Short: "Start a guarded release of a boolean flag",
		Long: `Start a guarded release of a boolean flag (POST …/flags/{key}/releases). FILE
(YAML or JSON) holds stages, metrics and optionally alpha, min_users and
check_interval_seconds, with the API's field names (docs/releases.md).`,
		Example: `  switchyard releases start new-checkout -f release.yaml --env production
  # release.yaml:
  #   stages: [{percentage: 10, duration_seconds: 3600}, {percentage: 50, duration_seconds: 3600}]
  #   metrics: [{event_key: checkout-error, kind: conversion, bad_direction: increase, tolerance: 0.02}]`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if file == "" {
				return usagef("-f is required: the release's stages and metrics")
			}
			body, err := g.object(file)
			if err != nil {
				return err
			}
			c, env, err := g.clientFor(cmd.Context(), &e)
			if err != nil {
				return err
			}
			req, err := jsonBody(body)
			if err != nil {
				return err
			}
			r, err := c.CreateReleaseWithBodyWithResponse(cmd.Context(), env, args[0], "application/json", req)
			if err := answer(r, err, http.StatusCreated); err != nil {
				return err
			}
			return g.print(*r.JSON201, releaseTable(*r.JSON201))
		},
	}
	e.bind(cmd)
	cmd.Flags().StringVarP(&file, "file", "f", "", "the release: stages, metrics, alpha, min_users, check_interval_seconds")
	return cmd
}

func releasesList(g *globals) *cobra.Command {
	var e envFlags
	var status, flagKey string
	cmd := &cobra.Command{
		Use: "list", Short: "List an environment's releases, newest first", Args: noArgs,
		Example: "  switchyard releases list --env production --status running",
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, env, err := g.clientFor(cmd.Context(), &e)
			if err != nil {
				return err
			}
			params := &apiclient.ListReleasesParams{}
			if status != "" {
				st := apiclient.ReleaseStatus(status)
				params.Status = &st
			}
			if flagKey != "" {
				params.FlagKey = &flagKey
			}
			r, err := c.ListReleasesWithResponse(cmd.Context(), env, params)
			if err := answer(r, err, http.StatusOK); err != nil {
				return err
			}
			return g.print(*r.JSON200, releaseTable(*r.JSON200...))
		},
	}
	e.bind(cmd)
	cmd.Flags().StringVar(&status, "status", "", "only those of this status: running, paused, completed, rolled_back or cancelled")
	cmd.Flags().StringVar(&flagKey, "flag", "", "only those of this flag")
	return cmd
}

// releaseID reads the ID argument.
func releaseID(arg string) (uuid.UUID, error) {
	id, err := uuid.Parse(arg)
	if err != nil {
		return uuid.Nil, usagef("a release's ID is a UUID, got %q", arg)
	}
	return id, nil
}

func releasesGet(g *globals) *cobra.Command {
	var e envFlags
	cmd := &cobra.Command{
		Use: "get ID", Short: "Show a release and its latest check", Args: exactArgs(1),
		Example: "  switchyard releases get 0b5f…-… --env production -o yaml",
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := releaseID(args[0])
			if err != nil {
				return err
			}
			c, env, err := g.clientFor(cmd.Context(), &e)
			if err != nil {
				return err
			}
			r, err := c.GetReleaseWithResponse(cmd.Context(), env, id)
			if err := answer(r, err, http.StatusOK); err != nil {
				return err
			}
			return g.print(*r.JSON200, releaseTable(*r.JSON200))
		},
	}
	e.bind(cmd)
	return cmd
}

// releasesAction is one of a release's transitions.
func releasesAction(g *globals, name, short string) *cobra.Command {
	var e envFlags
	cmd := &cobra.Command{
		Use: name + " ID", Short: short, Args: exactArgs(1),
		Example: fmt.Sprintf("  switchyard releases %s 0b5f…-… --env production", name),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := releaseID(args[0])
			if err != nil {
				return err
			}
			c, env, err := g.clientFor(cmd.Context(), &e)
			if err != nil {
				return err
			}
			rel, err := releaseTransition(cmd.Context(), c, env, id, name)
			if err != nil {
				return err
			}
			return g.print(rel, releaseTable(rel))
		},
	}
	e.bind(cmd)
	return cmd
}

func releaseTransition(ctx context.Context, c *apiclient.ClientWithResponses, env, id uuid.UUID, name string) (apiclient.Release, error) {
	var body []byte
	var rel *apiclient.Release
	var resp response
	switch name {
	case "pause":
		r, err := c.PauseReleaseWithResponse(ctx, env, id)
		if err != nil {
			return apiclient.Release{}, err
		}
		resp, body, rel = r, r.Body, r.JSON200
	case "resume":
		r, err := c.ResumeReleaseWithResponse(ctx, env, id)
		if err != nil {
			return apiclient.Release{}, err
		}
		resp, body, rel = r, r.Body, r.JSON200
	case "rollback":
		r, err := c.RollbackReleaseWithResponse(ctx, env, id)
		if err != nil {
			return apiclient.Release{}, err
		}
		resp, body, rel = r, r.Body, r.JSON200
	default:
		r, err := c.CancelReleaseWithResponse(ctx, env, id)
		if err != nil {
			return apiclient.Release{}, err
		}
		resp, body, rel = r, r.Body, r.JSON200
	}
	if err := expect(resp, body, http.StatusOK); err != nil {
		return apiclient.Release{}, err
	}
	return *rel, nil
}
