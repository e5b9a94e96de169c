package cli

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"
)

func loginCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "login",
		Short: "Save a server and token as a profile of the config file",
		Long: `Save the server (--url) and a personal access token (--token, SWITCHYARD_TOKEN,
or a line read from stdin) as a profile (--profile, default "default") of
$XDG_CONFIG_HOME/switchyard/config.yaml, written with mode 0600, after checking
that the server takes the token.`,
		Example: "  switchyard login --url https://flags.example.com --token \"$TOKEN\"\n  echo \"$TOKEN\" | switchyard login --url https://flags.example.com --profile staging",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if g.token == "" {
				g.token, _ = g.env("SWITCHYARD_TOKEN")
			}
			if g.token == "" {
				line, err := bufio.NewReader(g.in).ReadString('\n')
				if err != nil && line == "" {
					return usagef("give the token with --token, SWITCHYARD_TOKEN or on stdin")
				}
				g.token = strings.TrimSpace(line)
			}
			if g.url == "" {
				g.url, _ = g.env("SWITCHYARD_URL")
			}
			g.url = cmpOr(g.url, defaultURL)
			if _, err := g.projects(cmd.Context()); err != nil {
				return fmt.Errorf("the server did not take the token: %w", err)
			}
			path, err := g.configPath()
			if err != nil {
				return err
			}
			var cf configFile
			if raw, err := os.ReadFile(path); err == nil {
				if err := yaml.Unmarshal(raw, &cf); err != nil {
					return fmt.Errorf("read %s: %w", path, err)
				}
			} else if !os.IsNotExist(err) {
				return err
			}
			if cf.Profiles == nil {
				cf.Profiles = map[string]profile{}
			}
			name := cmpOr(g.profile, "default")
			cf.Profiles[name] = profile{URL: g.url, Token: g.token}
			raw, err := yaml.Marshal(cf)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				return err
			}
			if err := os.WriteFile(path, raw, 0o600); err != nil {
				return err
			}
			if err := os.Chmod(path, 0o600); err != nil { // an existing file keeps its mode otherwise
				return err
			}
			_, err = fmt.Fprintf(g.out, "saved profile %q (%s) in %s\n", name, g.url, path)
			return err
		},
	}
}
