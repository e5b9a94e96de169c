package cli

import (
	"net/http"
	"strconv"

	"github.com/spf13/cobra"
)

func statusCommand(g *globals) *cobra.Command {
	var e envFlags
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Each flag's evaluation status: new, active, inactive or launched",
		Long: `Each flag's evaluation status in an environment (GET …/flag-status): new,
active, inactive or launched, with its evaluations of the last 7 days and when it
was last evaluated.`,
		Example: "  switchyard status --env production",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, env, err := g.clientFor(cmd.Context(), &e)
			if err != nil {
				return err
			}
			r, err := c.ListFlagStatusWithResponse(cmd.Context(), env)
			if err := answer(r, err, http.StatusOK); err != nil {
				return err
			}
			t := table{header: []string{"FLAG", "STATUS", "EVALUATIONS 7D", "LAST EVALUATED"}}
			for _, s := range *r.JSON200 {
				last := "never"
				if s.LastEvaluatedAt != nil {
					last = s.LastEvaluatedAt.Format("2006-01-02 15:04")
				}
				t.rows = append(t.rows, []string{s.FlagKey, string(s.Status), strconv.FormatInt(s.Evaluations7d, 10), last})
			}
			return g.print(*r.JSON200, t)
		},
	}
	e.bind(cmd)
	return cmd
}
