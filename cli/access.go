package cli

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/switchyard/switchyard/gen/apiclient"
)

// The commands of who and what may reach the API: personal access tokens,
// SDK keys and project members.

func tokensCommand(g *globals) *cobra.Command {
	var name, scope string
	var days int
	create := &cobra.Command{
		Use: "create --name NAME [--scope read_write|read_only] [--expires-in-days N]", Short: "Make a personal access token; it is shown once",
		Example: "  switchyard tokens create --name ci --scope read_write --expires-in-days 90 -o json | jq -r .token",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			in := apiclient.TokenInput{Name: name, Scope: apiclient.TokenScope(scope)}
			if cmd.Flags().Changed("expires-in-days") {
				in.ExpiresInDays = &days
			}
			r, err := c.CreateTokenWithResponse(cmd.Context(), in)
			if err := answer(r, err, http.StatusOK); err != nil {
				return err
			}
			t := r.JSON200
			return g.print(*t, table{header: []string{"ID", "NAME", "SCOPE", "TOKEN (shown once)"},
				rows: [][]string{{strconv.FormatInt(t.Id, 10), t.Name, string(t.Scope), t.Token}}})
		},
	}
	create.Flags().StringVar(&name, "name", "", "what the token is for")
	create.Flags().StringVar(&scope, "scope", "read_write", "read_write or read_only")
	create.Flags().IntVar(&days, "expires-in-days", 0, "days until it expires (never when not given)")
	return group("tokens", "Your personal access tokens",
		&cobra.Command{
			Use: "list", Short: "List your personal access tokens", Args: noArgs,
			Example: "  switchyard tokens list",
			RunE: func(cmd *cobra.Command, _ []string) error {
				c, err := g.client()
				if err != nil {
					return err
				}
				r, err := c.ListTokensWithResponse(cmd.Context())
				if err := answer(r, err, http.StatusOK); err != nil {
					return err
				}
				t := table{header: []string{"ID", "NAME", "SCOPE", "PREFIX", "LAST USED", "EXPIRES"}}
				for _, k := range *r.JSON200 {
					t.rows = append(t.rows, []string{strconv.FormatInt(k.Id, 10), k.Name, string(k.Scope), k.Prefix, when(k.LastUsedAt, "never"), when(k.ExpiresAt, "never")})
				}
				return g.print(*r.JSON200, t)
			},
		},
		create,
		&cobra.Command{
			Use: "delete ID", Short: "Revoke one of your personal access tokens", Args: exactArgs(1),
			Example: "  switchyard tokens delete 7",
			RunE: func(cmd *cobra.Command, args []string) error {
				id, err := positiveID(args[0], "token")
				if err != nil {
					return err
				}
				c, err := g.client()
				if err != nil {
					return err
				}
				r, err := c.DeleteTokenWithResponse(cmd.Context(), id)
				if err := answer(r, err, http.StatusNoContent); err != nil {
					return err
				}
				_, err = fmt.Fprintf(g.out, "deleted token %d\n", id)
				return err
			},
		},
	)
}

func keysCommand(g *globals) *cobra.Command {
	var project string
	list := &cobra.Command{
		Use: "list --project SLUG", Short: "List a project's SDK keys (project admin)", Args: noArgs,
		Example: "  switchyard keys list --project default",
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, p, err := g.clientForProject(cmd, project)
			if err != nil {
				return err
			}
			r, err := c.ListSdkKeysWithResponse(cmd.Context(), p.Id)
			if err := answer(r, err, http.StatusOK); err != nil {
				return err
			}
			t := table{header: []string{"ID", "NAME", "KIND", "ENVIRONMENT", "PREFIX"}}
			for _, k := range *r.JSON200 {
				t.rows = append(t.rows, []string{strconv.FormatInt(k.Id, 10), k.Name, string(k.Kind), k.EnvironmentName, k.Prefix})
			}
			return g.print(*r.JSON200, t)
		},
	}
	list.Flags().StringVar(&project, "project", "", "the project's slug")
	var e envFlags
	var name, kind string
	create := &cobra.Command{
		Use: "create --env ENV --name NAME [--kind server|client]", Short: "Make an SDK key of an environment; it is shown once", Args: noArgs,
		Example: "  switchyard keys create --env production --name checkout-service",
		RunE: func(cmd *cobra.Command, _ []string) error {
			env, p, err := e.lookUp(cmd.Context(), g)
			if err != nil {
				return err
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			in := apiclient.SdkKeyInput{EnvironmentId: env, Name: name}
			if kind != "" {
				in.Kind = &kind
			}
			r, err := c.CreateSdkKeyWithResponse(cmd.Context(), p.Id, in)
			if err := answer(r, err, http.StatusOK); err != nil {
				return err
			}
			k := r.JSON200
			return g.print(*k, table{header: []string{"ID", "NAME", "KIND", "ENVIRONMENT", "KEY (shown once)"},
				rows: [][]string{{strconv.FormatInt(k.Id, 10), k.Name, string(k.Kind), k.EnvironmentName, k.Key}}})
		},
	}
	e.bind(create)
	create.Flags().StringVar(&name, "name", "", "what the key is for")
	create.Flags().StringVar(&kind, "kind", "", "server (the default) or client")
	var revokeProject string
	revoke := &cobra.Command{
		Use: "revoke ID --project SLUG", Short: "Revoke an SDK key", Args: exactArgs(1),
		Example: "  switchyard keys revoke 12 --project default",
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := positiveID(args[0], "key")
			if err != nil {
				return err
			}
			c, p, err := g.clientForProject(cmd, revokeProject)
			if err != nil {
				return err
			}
			r, err := c.RevokeSdkKeyWithResponse(cmd.Context(), p.Id, id)
			if err := answer(r, err, http.StatusNoContent); err != nil {
				return err
			}
			_, err = fmt.Fprintf(g.out, "revoked key %d\n", id)
			return err
		},
	}
	revoke.Flags().StringVar(&revokeProject, "project", "", "the project's slug")
	return group("keys", "A project's SDK keys", list, create, revoke)
}

func membersCommand(g *globals) *cobra.Command {
	var project string
	list := &cobra.Command{
		Use: "list --project SLUG", Short: "List a project's members", Args: noArgs,
		Example: "  switchyard members list --project default",
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, p, err := g.clientForProject(cmd, project)
			if err != nil {
				return err
			}
			r, err := c.ListMembersWithResponse(cmd.Context(), p.Id)
			if err := answer(r, err, http.StatusOK); err != nil {
				return err
			}
			return g.print(*r.JSON200, memberTable(*r.JSON200...))
		},
	}
	list.Flags().StringVar(&project, "project", "", "the project's slug")
	var addProject, role string
	set := func(use, short, example string, add bool) *cobra.Command {
		cmd := &cobra.Command{
			Use: use, Short: short, Example: example, Args: exactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				user, err := positiveID(args[0], "user")
				if err != nil {
					return err
				}
				c, p, err := g.clientForProject(cmd, addProject)
				if err != nil {
					return err
				}
				if add {
					r, err := c.AddMemberWithResponse(cmd.Context(), p.Id, apiclient.MemberInput{UserId: user, Role: apiclient.Role(role)})
					if err := answer(r, err, http.StatusOK); err != nil {
						return err
					}
					return g.print(*r.JSON200, memberTable(*r.JSON200))
				}
				r, err := c.UpdateMemberWithResponse(cmd.Context(), p.Id, user, apiclient.MemberRoleInput{Role: apiclient.Role(role)})
				if err := answer(r, err, http.StatusOK); err != nil {
					return err
				}
				return g.print(*r.JSON200, memberTable(*r.JSON200))
			},
		}
		cmd.Flags().StringVar(&addProject, "project", "", "the project's slug")
		cmd.Flags().StringVar(&role, "role", "viewer", "admin, editor or viewer")
		return cmd
	}
	var removeProject string
	remove := &cobra.Command{
		Use: "remove USER_ID --project SLUG", Short: "Remove a member from a project", Args: exactArgs(1),
		Example: "  switchyard members remove 42 --project default",
		RunE: func(cmd *cobra.Command, args []string) error {
			user, err := positiveID(args[0], "user")
			if err != nil {
				return err
			}
			c, p, err := g.clientForProject(cmd, removeProject)
			if err != nil {
				return err
			}
			r, err := c.RemoveMemberWithResponse(cmd.Context(), p.Id, user)
			if err := answer(r, err, http.StatusNoContent); err != nil {
				return err
			}
			_, err = fmt.Fprintf(g.out, "removed user %d from %s\n", user, p.Slug)
			return err
		},
	}
	remove.Flags().StringVar(&removeProject, "project", "", "the project's slug")
	return group("members", "A project's members and their roles", list,
		set("add USER_ID --project SLUG [--role R]", "Add a user to a project", "  switchyard members add 42 --project default --role editor", true),
		set("update USER_ID --project SLUG --role R", "Change a member's role", "  switchyard members update 42 --project default --role admin", false),
		remove)
}

func memberTable(ms ...apiclient.Member) table {
	t := table{header: []string{"USER", "EMAIL", "NAME", "ROLE"}}
	for _, m := range ms {
		t.rows = append(t.rows, []string{strconv.FormatInt(m.UserId, 10), m.Email, m.Name, string(m.Role)})
	}
	return t
}

// clientForProject is the client and the project slug names (--project is
// required).
func (g *globals) clientForProject(cmd *cobra.Command, slug string) (*apiclient.ClientWithResponses, apiclient.Project, error) {
	if slug == "" {
		return nil, apiclient.Project{}, usagef("%s: --project is required", cmd.CommandPath())
	}
	p, err := g.project(cmd.Context(), slug)
	if err != nil {
		return nil, apiclient.Project{}, err
	}
	c, err := g.client()
	return c, p, err
}

// positiveID reads a numeric id argument.
func positiveID(arg, what string) (int64, error) {
	id, err := strconv.ParseInt(arg, 10, 64)
	if err != nil || id <= 0 {
		return 0, usagef("a %s's id is a positive integer, got %q", what, arg)
	}
	return id, nil
}
