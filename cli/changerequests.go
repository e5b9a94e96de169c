package cli

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/switchyard/switchyard/gen/apiclient"
)

func changeRequestsCommand(g *globals) *cobra.Command {
	return group("change-requests", "Changes waiting for approval in an environment",
		changeRequestsList(g), changeRequestsApprove(g), changeRequestsReject(g))
}

func changeRequestsList(g *globals) *cobra.Command {
	var e envFlags
	var status string
	cmd := &cobra.Command{
		Use: "list", Short: "List an environment's change requests", Args: noArgs,
		Example: "  switchyard change-requests list --env production --status pending",
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, env, err := g.clientFor(cmd.Context(), &e)
			if err != nil {
				return err
			}
			params := &apiclient.ListChangeRequestsParams{}
			if status != "" {
				st := apiclient.ChangeRequestStatus(status)
				params.Status = &st
			}
			r, err := c.ListChangeRequestsWithResponse(cmd.Context(), env, params)
			if err := answer(r, err, http.StatusOK); err != nil {
				return err
			}
			t := table{header: []string{"ID", "FLAG", "STATUS", "REQUESTED BY", "CREATED"}}
			for _, cr := range *r.JSON200 {
				t.rows = append(t.rows, []string{strconv.FormatInt(cr.Id, 10), cr.FlagKey, string(cr.Status), cr.RequestedBy, cr.CreatedAt.Format("2006-01-02 15:04")})
			}
			return g.print(*r.JSON200, t)
		},
	}
	e.bind(cmd)
	cmd.Flags().StringVar(&status, "status", "", "only those of this status: pending, approved, rejected or cancelled")
	return cmd
}

func changeRequestsApprove(g *globals) *cobra.Command {
	var e envFlags
	cmd := &cobra.Command{
		Use: "approve ID", Short: "Approve a change request and apply it (not your own)", Args: exactArgs(1),
		Example: "  switchyard change-requests approve 12 --env production",
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := positiveID(args[0], "change request")
			if err != nil {
				return err
			}
			c, env, err := g.clientFor(cmd.Context(), &e)
			if err != nil {
				return err
			}
			r, err := c.ApproveChangeRequestWithResponse(cmd.Context(), env, id)
			if err != nil {
				return err
			}
			return g.flagWritten(r, r.Body, r.JSON200, nil)
		},
	}
	e.bind(cmd)
	return cmd
}

func changeRequestsReject(g *globals) *cobra.Command {
	var e envFlags
	var reason string
	cmd := &cobra.Command{
		Use: "reject ID [--reason TEXT]", Short: "Reject a change request", Args: exactArgs(1),
		Example: "  switchyard change-requests reject 12 --env production --reason 'not this week'",
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := positiveID(args[0], "change request")
			if err != nil {
				return err
			}
			c, env, err := g.clientFor(cmd.Context(), &e)
			if err != nil {
				return err
			}
			body := apiclient.RejectInput{}
			if reason != "" {
				body.Reason = &reason
			}
			r, err := c.RejectChangeRequestWithResponse(cmd.Context(), env, id, body)
			if err := answer(r, err, http.StatusNoContent); err != nil {
				return err
			}
			_, err = fmt.Fprintf(g.out, "rejected change request %d\n", id)
			return err
		},
	}
	e.bind(cmd)
	cmd.Flags().StringVar(&reason, "reason", "", "why, shown to the requester")
	return cmd
}
