package cli

import (
	"context"
	"fmt"
	"net/http"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchyard/switchyard/gen/apiclient"
)

// The write tools' inputs. A flag's fields and a release's carry the API's
// names (docs/reference/flags.md, docs/releases.md).
type (
	mcpFlagFields struct {
		Key               string                      `json:"key" jsonschema:"the flag's key: ASCII letters, digits, underscore and hyphen, at most 100 characters"`
		FlagType          string                      `json:"flag_type,omitempty" jsonschema:"boolean (when left out), string, integer or json"`
		IsEnabled         bool                        `json:"is_enabled" jsonschema:"the master switch: false serves the disabled value to everyone"`
		RolloutPercentage *int                        `json:"rollout_percentage,omitempty" jsonschema:"0 to 100: the share of users (not matched by a rule) who are served; left out, everyone"`
		Description       string                      `json:"description,omitempty" jsonschema:"what the flag is for"`
		DefaultValue      any                         `json:"default_value,omitempty" jsonschema:"for a string, integer or json flag: the value served (of the flag's type)"`
		DisabledValue     any                         `json:"disabled_value,omitempty" jsonschema:"for a string, integer or json flag: the value while off or outside the rollout"`
		Rules             []apiclient.TargetingRule   `json:"rules,omitempty" jsonschema:"targeting rules, tried in order, the first match wins: {attribute, operator, values} holds when it holds for any of the values; operators: equals, not_equals, contains, not_contains, starts_with, ends_with, not_in, regex, greater_than, greater_than_or_equal, less_than, less_than_or_equal, semver_equals, semver_greater_than, semver_greater_than_or_equal, semver_less_than, semver_less_than_or_equal, before, after; conditions adds more (AND), segment_key requires a segment; variant is the value a match serves (non-boolean flags)"`
		Variants          []apiclient.WeightedVariant `json:"variants,omitempty" jsonschema:"for a string, integer or json flag: weighted values ({value, weight}) shared out among the users served"`
		Prerequisites     []apiclient.Prerequisite    `json:"prerequisites,omitempty" jsonschema:"other flags of the environment that must be served first ({flag_key, required_value?})"`
		Tags              []string                    `json:"tags,omitempty"`
		OwnerEmail        string                      `json:"owner_email,omitempty" jsonschema:"who owns the flag"`
		ClientSide        bool                        `json:"client_side,omitempty" jsonschema:"whether client keys (browsers, apps) may evaluate the flag; default false"`
	}
	mcpCreateFlag struct {
		mcpEnv
		mcpFlagFields
	}
	mcpUpdateFlag struct {
		mcpFlagKey
		Patch map[string]any `json:"patch" jsonschema:"a JSON merge patch (RFC 7396) of the flag's fields, such as {\"rollout_percentage\": 25}: the fields given change, null clears a field, the rest stay"`
	}
	mcpToggleFlag struct {
		mcpFlagKey
		On bool `json:"on" jsonschema:"true turns the flag on, false off (is_enabled)"`
	}
	mcpStartRelease struct {
		mcpFlagKey
		apiclient.CreateReleaseRequest
	}
	mcpRelease struct {
		mcpEnv
		ID  string `json:"id,omitempty" jsonschema:"the release's id, as start_release answered it"`
		Key string `json:"key,omitempty" jsonschema:"instead of id: the flag whose running or paused release it is"`
	}
)

// mcpFlagWrite is what a flag write answered: the flag, or the change
// request opened instead in an environment that requires approval.
type mcpFlagWrite struct {
	Flag          *apiclient.Flag          `json:"flag,omitempty"`
	ChangeRequest *apiclient.ChangeRequest `json:"change_request,omitempty"`
	Message       string                   `json:"message,omitempty"`
}

func mcpFlagWritten(r response, body []byte, flag *apiclient.Flag, cr *apiclient.ChangeRequest) (any, error) {
	written, opened, err := flagWrite(r, body, flag, cr)
	if err != nil {
		return nil, err
	}
	if opened != nil {
		return mcpFlagWrite{ChangeRequest: opened, Message: fmt.Sprintf(
			"change request %d opened: the environment requires approval, and the flag stays as it is until someone else approves it", opened.Id)}, nil
	}
	return mcpFlagWrite{Flag: written}, nil
}

func (g *globals) addWriteTools(s *mcp.Server) {
	write := func(title string) *mcp.ToolAnnotations { return &mcp.ToolAnnotations{Title: title} }
	addMCPTool(s, &mcp.Tool{
		Name: "create_flag",
		Description: "Create a flag in an environment (off unless is_enabled is true). When a flag of that key exists, every field is replaced " +
			"and the fields left out take their defaults: use update_flag to change some fields. Replacing is refused where the environment requires approval.",
		Annotations: write("Create a flag"),
	}, func(ctx context.Context, in mcpCreateFlag) (any, error) {
		c, env, err := g.clientFor(ctx, in.flags())
		if err != nil {
			return nil, err
		}
		req, err := jsonBody(in.mcpFlagFields)
		if err != nil {
			return nil, err
		}
		r, err := c.PutFlagWithBodyWithResponse(ctx, env, "application/json", req)
		if err != nil {
			return nil, err
		}
		return mcpFlagWritten(r, r.Body, r.JSON200, nil)
	})
	addMCPTool(s, &mcp.Tool{
		Name: "update_flag",
		Description: "Change some of a flag's fields with a JSON merge patch. Where the environment requires approval it opens a change request " +
			"instead (its id is in the result) and the flag stays as it is until someone else approves it.",
		Annotations: write("Update a flag"),
	}, func(ctx context.Context, in mcpUpdateFlag) (any, error) {
		if in.Patch == nil {
			return nil, fmt.Errorf("patch: want an object of the flag's fields")
		}
		r, err := g.sendFlagPatch(ctx, in.flags(), in.Key, in.Patch)
		if err != nil {
			return nil, err
		}
		return mcpFlagWritten(r, r.Body, r.JSON200, r.JSON202)
	})
	addMCPTool(s, &mcp.Tool{
		Name: "toggle_flag",
		Description: "Turn a flag on or off (its is_enabled). Where the environment requires approval it opens a change request instead " +
			"(its id is in the result).",
		Annotations: &mcp.ToolAnnotations{Title: "Turn a flag on or off", IdempotentHint: true},
	}, func(ctx context.Context, in mcpToggleFlag) (any, error) {
		r, err := g.sendFlagPatch(ctx, in.flags(), in.Key, map[string]any{"is_enabled": in.On})
		if err != nil {
			return nil, err
		}
		return mcpFlagWritten(r, r.Body, r.JSON200, r.JSON202)
	})
	addMCPTool(s, &mcp.Tool{
		Name: "start_release",
		Description: "Start a guarded release of a boolean flag: its rollout goes up stage by stage (stages: [{percentage, duration_seconds}], " +
			"percentages strictly increasing) while metrics (metrics: [{event_key, kind: conversion or mean, bad_direction: increase or decrease, " +
			"tolerance: 0.02 for 2 %}]) are compared between users served and not; a regression rolls the flag back by itself.",
		Annotations: write("Start a guarded release"),
	}, func(ctx context.Context, in mcpStartRelease) (any, error) {
		c, env, err := g.clientFor(ctx, in.flags())
		if err != nil {
			return nil, err
		}
		r, err := c.CreateReleaseWithResponse(ctx, env, in.Key, in.CreateReleaseRequest)
		if err := answer(r, err, http.StatusCreated); err != nil {
			return nil, err
		}
		return map[string]any{"release": *r.JSON201}, nil
	})
	for _, t := range []struct{ name, action, title, description string }{
		{"pause_release", "pause", "Pause a guarded release",
			"Pause a running guarded release: its rollout stays where it is and it keeps guarding. Name it by id, or by its flag's key."},
		{"rollback_release", "rollback", "Roll a guarded release back",
			"Roll a running or paused guarded release back: the flag's rollout becomes 0. Name it by id, or by its flag's key."},
	} {
		addMCPTool(s, &mcp.Tool{Name: t.name, Description: t.description, Annotations: write(t.title)},
			func(ctx context.Context, in mcpRelease) (any, error) {
				c, env, err := g.clientFor(ctx, in.flags())
				if err != nil {
					return nil, err
				}
				id, err := mcpActiveRelease(ctx, c, env, in)
				if err != nil {
					return nil, err
				}
				rel, err := releaseTransition(ctx, c, env, id, t.action)
				if err != nil {
					return nil, err
				}
				return map[string]any{"release": rel}, nil
			})
	}
}

// mcpActiveRelease is the release in names: its id, or the running or paused
// release of its flag (a flag has at most one).
func mcpActiveRelease(ctx context.Context, c *apiclient.ClientWithResponses, env uuid.UUID, in mcpRelease) (uuid.UUID, error) {
	switch {
	case (in.ID == "") == (in.Key == ""):
		return uuid.Nil, fmt.Errorf("give the release's id or its flag's key (one of them)")
	case in.ID != "":
		return releaseID(in.ID)
	}
	r, err := c.ListReleasesWithResponse(ctx, env, &apiclient.ListReleasesParams{FlagKey: &in.Key})
	if err := answer(r, err, http.StatusOK); err != nil {
		return uuid.Nil, err
	}
	for _, rel := range *r.JSON200 {
		if rel.Status == apiclient.ReleaseStatusRunning || rel.Status == apiclient.ReleaseStatusPaused {
			return rel.Id, nil
		}
	}
	return uuid.Nil, fmt.Errorf("flag %q has no running or paused release here", in.Key)
}
