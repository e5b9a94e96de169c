package cli

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchyard/switchyard/gen/apiclient"
)

func auditCommand(g *globals) *cobra.Command {
	var actor, action, resourceType, from, to string
	var all bool
	list := &cobra.Command{
		Use:   "list",
		Short: "The audit trail, newest first (workspace admins: every entry; project admins: their projects')",
		Long: `The audit trail (GET /api/audit), newest first: who changed what, when and from
where. Filters combine; --from and --to are RFC 3339 times. One page at a time
unless --all.`,
		Example: "  switchyard audit list --actor ops@example.com --from 2026-11-01T00:00:00Z\n  switchyard audit list --resource-type flag --all -o json",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			params := &apiclient.ListWorkspaceAuditParams{}
			if actor != "" {
				params.Actor = &actor
			}
			if action != "" {
				params.Action = &action
			}
			if resourceType != "" {
				rt := apiclient.ListWorkspaceAuditParamsResourceType(resourceType)
				params.ResourceType = &rt
			}
			if params.From, params.To, err = timeRange(from, to); err != nil {
				return err
			}
			var items []apiclient.WorkspaceAuditEntry
			for {
				r, err := c.ListWorkspaceAuditWithResponse(cmd.Context(), params)
				if err := answer(r, err, http.StatusOK); err != nil {
					return err
				}
				items = append(items, r.JSON200.Items...)
				if !all || r.JSON200.NextCursor == nil {
					break
				}
				params.Cursor = r.JSON200.NextCursor
			}
			t := table{header: []string{"ID", "AT", "ACTOR", "ACTION", "RESOURCE"}}
			for _, e := range items {
				who := string(e.Actor.Kind)
				if e.Actor.Email != nil {
					who = *e.Actor.Email
				} else if e.Actor.Label != nil {
					who = *e.Actor.Label
				}
				what := string(e.Resource.Type) + " " + e.Resource.Id
				if e.Resource.Key != nil {
					what = string(e.Resource.Type) + " " + *e.Resource.Key
				}
				t.rows = append(t.rows, []string{strconv.FormatInt(e.Id, 10), e.At.Format(time.RFC3339), who, e.Action, what})
			}
			return g.print(items, t)
		},
	}
	list.Flags().StringVar(&actor, "actor", "", "only entries by this actor (email or token)")
	list.Flags().StringVar(&action, "action", "", "only entries of this action, e.g. flag.updated")
	list.Flags().StringVar(&resourceType, "resource-type", "", "only entries about this kind of resource, e.g. flag")
	list.Flags().StringVar(&from, "from", "", "only entries at or after this time (RFC 3339)")
	list.Flags().StringVar(&to, "to", "", "only entries before this time (RFC 3339)")
	list.Flags().BoolVar(&all, "all", false, "follow the pages to the end")
	var vFrom, vTo string
	verify := &cobra.Command{
		Use:   "verify",
		Short: "Check that no audit entry was changed or removed (workspace admin)",
		Long: `Check the audit trail's hash chain (GET /api/audit/verify): every sealed entry is
as it was written and none is missing. Exit 0 when it holds, 1 when it does not,
naming the first entry that fails.`,
		Example: "  switchyard audit verify\n  switchyard audit verify --from 2026-11-01T00:00:00Z",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			params := &apiclient.VerifyWorkspaceAuditParams{}
			if params.From, params.To, err = timeRange(vFrom, vTo); err != nil {
				return err
			}
			r, err := c.VerifyWorkspaceAuditWithResponse(cmd.Context(), params)
			if err := answer(r, err, http.StatusOK); err != nil {
				return err
			}
			v := r.JSON200
			verdict := "ok"
			if !v.Ok {
				verdict = "FAILED"
				if v.FirstBadId != nil {
					verdict += " at entry " + strconv.FormatInt(*v.FirstBadId, 10)
				}
			}
			if err := g.print(*v, table{header: []string{"CHECKED", "VERDICT"}, rows: [][]string{{strconv.FormatInt(v.Checked, 10), verdict}}}); err != nil {
				return err
			}
			if !v.Ok {
				return fmt.Errorf("the audit trail does not verify: %s", verdict)
			}
			return nil
		},
	}
	verify.Flags().StringVar(&vFrom, "from", "", "check entries at or after this time (RFC 3339)")
	verify.Flags().StringVar(&vTo, "to", "", "check entries before this time (RFC 3339)")
	return group("audit", "The audit trail of every change", list, verify)
}

// timeRange reads optional RFC 3339 bounds.
func timeRange(from, to string) (*time.Time, *time.Time, error) {
	parse := func(name, v string) (*time.Time, error) {
		if v == "" {
			return nil, nil
		}
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return nil, usagef("--%s: want an RFC 3339 time such as 2026-11-01T00:00:00Z, got %q", name, v)
		}
		return &t, nil
	}
	f, err := parse("from", from)
	if err != nil {
		return nil, nil, err
	}
	t, err := parse("to", to)
	return f, t, err
}
