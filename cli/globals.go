package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/switchyard/switchyard/gen/apiclient"
)

// defaultURL is the server a command talks to when nothing else says.
const defaultURL = "http://localhost:3000"

// globals are the flags every command takes, and what they resolve to.
type globals struct {
	env    Env
	in     io.Reader
	out    io.Writer
	errOut io.Writer

	url, token, profile, output string
}

func (g *globals) bind(root *cobra.Command) {
	f := root.PersistentFlags()
	f.StringVar(&g.url, "url", "", "server URL (SWITCHYARD_URL; default "+defaultURL+")")
	f.StringVar(&g.token, "token", "", "personal access token (SWITCHYARD_TOKEN)")
	f.StringVar(&g.profile, "profile", "", "profile of the config file to use (SWITCHYARD_PROFILE; default \"default\")")
	f.StringVarP(&g.output, "output", "o", "table", "output: table, json or yaml")
}

// profile is one entry of the config file.
type profile struct {
	URL   string `json:"url"`
	Token string `json:"token"`
}

// configFile is $XDG_CONFIG_HOME/switchyard/config.yaml (~/.config when
// unset): profiles by name.
type configFile struct {
	Profiles map[string]profile `json:"profiles"`
}

func (g *globals) configPath() (string, error) {
	dir, ok := g.env("XDG_CONFIG_HOME")
	if !ok || dir == "" {
		home, ok := g.env("HOME")
		if !ok || home == "" {
			return "", fmt.Errorf("neither XDG_CONFIG_HOME nor HOME is set: cannot find the config file")
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "switchyard", "config.yaml"), nil
}

// connection resolves the server and token: a flag, else the environment,
// else the profile, else the default URL (and no token).
func (g *globals) connection() (url, token string, err error) {
	url, token = g.url, g.token
	if url == "" {
		url, _ = g.env("SWITCHYARD_URL")
	}
	if token == "" {
		token, _ = g.env("SWITCHYARD_TOKEN")
	}
	if url == "" || token == "" {
		p, err := g.readProfile()
		if err != nil {
			return "", "", err
		}
		url, token = cmpOr(url, p.URL, defaultURL), cmpOr(token, p.Token)
	}
	return url, token, nil
}

// readProfile reads the chosen profile; none is no error unless it was
// named.
func (g *globals) readProfile() (profile, error) {
	name := g.profile
	if name == "" {
		name, _ = g.env("SWITCHYARD_PROFILE")
	}
	path, err := g.configPath()
	if err != nil {
		return profile{}, nil
	}
	raw, err := os.ReadFile(path)
	if os.IsNotExist(err) && name == "" {
		return profile{}, nil
	}
	if err != nil {
		return profile{}, fmt.Errorf("read %s: %w", path, err)
	}
	var cf configFile
	if err := yaml.Unmarshal(raw, &cf); err != nil {
		return profile{}, fmt.Errorf("read %s: %w", path, err)
	}
	p, ok := cf.Profiles[cmpOr(name, "default")]
	if !ok && name != "" {
		return profile{}, usagef("no profile %q in %s", name, path)
	}
	return p, nil
}

func cmpOr(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// client is the generated client for the resolved server, sending the
// token on every request.
func (g *globals) client() (*apiclient.ClientWithResponses, error) {
	url, token, err := g.connection()
	if err != nil {
		return nil, err
	}
	hc := &http.Client{Timeout: 30 * time.Second, Transport: reach{url: url, next: http.DefaultTransport}}
	return apiclient.NewClientWithResponses(url, apiclient.WithHTTPClient(hc),
		apiclient.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
			if token != "" {
				r.Header.Set("Authorization", "Bearer "+token)
			}
			return nil
		}))
}

// reach says which server could not be reached, and how to name another.
type reach struct {
	url  string
	next http.RoundTripper
}

func (t reach) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the server at %s (give another with --url or SWITCHYARD_URL): %w", t.url, err)
	}
	return resp, nil
}
