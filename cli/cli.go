package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// Exit codes (docs/cli.md).
const (
	ExitOK    = 0
	ExitError = 1
	ExitUsage = 2
	// ExitChanges is diff's answer when there is something to apply.
	ExitChanges = 2
	// ExitPending is apply's answer when change requests wait for approval.
	ExitPending = 3
)

// Env is how the command line reads its environment: os.LookupEnv, or a
// map in tests.
type Env func(string) (string, bool)

// Serve runs the server until ctx ends: the binary's behaviour with no
// command, or with serve.
type Serve func(ctx context.Context) error

// Run runs the command named by args (without the program's name) and
// returns its exit code. With no argument it serves. stdin is read by
// commands that take input there (login's token, -f -).
func Run(ctx context.Context, args []string, env Env, stdin io.Reader, stdout, stderr io.Writer, serve Serve) int {
	if len(args) == 0 {
		args = []string{"serve"}
	}
	root := newRoot(env, stdin, stdout, stderr, serve)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	var status exitStatus
	if errors.As(err, &status) {
		return int(status) // the command has said why
	}
	fmt.Fprintln(stderr, "switchyard:", err)
	var u usageError
	if errors.As(err, &u) {
		return ExitUsage
	}
	return ExitError
}

// exitStatus ends a command that has printed its answer with an exit code
// other than 0 (diff's changes, apply's pending change requests,
// validate's problems).
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// usageError is a command used wrongly: exit 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

func newRoot(env Env, stdin io.Reader, stdout, stderr io.Writer, serve Serve) *cobra.Command {
	g := &globals{env: env, in: stdin, out: stdout, errOut: stderr}
	root := &cobra.Command{
		Use:   "switchyard",
		Short: "Switchyard: feature flags, served and driven from the command line",
		Long: `switchyard with no command serves (configured by environment variables only).
With a command it is the command line client of a Switchyard server: --url and
--token (or SWITCHYARD_URL and SWITCHYARD_TOKEN, or a profile) say which.`,
		Example: `  switchyard                                  # serve
  switchyard projects list
  switchyard environments list --project default -o json`,
		Args: subcommand,
		// Runnable, so that cobra hands an unknown command to Args
		// rather than printing help; with no argument Run serves.
		RunE:          func(*cobra.Command, []string) error { return usagef("give a command (see --help)") },
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err.Error()} })
	g.bind(root)
	root.AddCommand(
		&cobra.Command{
			Use:   "serve",
			Short: "Run the server (the default with no command)",
			Long:  "Run the server. It is configured through environment variables only (docs/reference/server.md).",
			Args:  noArgs,
			RunE:  func(cmd *cobra.Command, _ []string) error { return serve(cmd.Context()) },
		},
		loginCommand(g),
		projectsCommand(g),
		environmentsCommand(g),
		flagsCommand(g),
		segmentsCommand(g),
		changeRequestsCommand(g),
		statusCommand(g),
		releasesCommand(g),
		tokensCommand(g),
		keysCommand(g),
		membersCommand(g),
		auditCommand(g),
		evalCommand(g),
		mcpCommand(g),
		exportCommand(g),
		validateCommand(g),
		diffCommand(g),
		applyCommand(g),
		schemaCommand(g),
	)
	return root
}

// subcommand refuses an unknown command of a command that only holds
// others, as a usage error (cobra's own would be a plain error).
func subcommand(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("unknown command %q for %q (see %s --help)", args[0], cmd.CommandPath(), cmd.CommandPath())
	}
	return nil
}

// group is a command that only holds others.
func group(use, short string, cmds ...*cobra.Command) *cobra.Command {
	c := &cobra.Command{
		Use: use, Short: short, Args: subcommand,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usagef("%s needs a command (see %s --help)", cmd.CommandPath(), cmd.CommandPath())
		},
	}
	c.AddCommand(cmds...)
	return c
}

// noArgs refuses positional arguments as a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("%s takes no arguments, got %q", cmd.CommandPath(), args)
	}
	return nil
}

// exactArgs wants n positional arguments, named in the command's Use.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s: want %d argument(s), got %d (see --help)", cmd.CommandPath(), n, len(args))
		}
		return nil
	}
}
