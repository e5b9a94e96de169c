package provider_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/jackc/pgx/v5"

	"github.com/switchyard/switchyard/gen/apiclient"
	"github.com/switchyard/switchyard/server/app"
	"github.com/switchyard/switchyard/server/config"
	"github.com/switchyard/switchyard/terraform/internal/provider"
)

// The acceptance tests run OpenTofu (TF_ACC_TERRAFORM_PATH, built by make
// test-terraform) against one real server, started here on a scratch
// database of TEST_DATABASE_URL, with a workspace admin's token.
var (
	factories = map[string]func() (tfprotov6.ProviderServer, error){
		"switchyard": providerserver.NewProtocol6WithError(provider.New("test")()),
	}
	// api is the admin's client of the server, for what the tests arrange
	// and check outside Terraform (drift, approvals).
	api *apiclient.ClientWithResponses
)

const dbName = "switchyard_terraform_acc"

func TestMain(m *testing.M) {
	if os.Getenv("TF_ACC") == "" {
		if os.Getenv("CI") == "true" {
			fmt.Fprintln(os.Stderr, "the provider's acceptance tests need TF_ACC=1 and TF_ACC_TERRAFORM_PATH in CI (make test-terraform)")
			os.Exit(1)
		}
		os.Exit(m.Run()) // resource.Test skips each test with the reason
	}
	ctx, cancel := context.WithCancel(context.Background())
	stop, err := startServer(ctx)
	code := 1
	if err != nil {
		fmt.Fprintln(os.Stderr, "start the server:", err)
	} else {
		code = m.Run()
	}
	cancel()
	if stop != nil {
		stop()
	}
	os.Exit(code)
}

// startServer starts Switchyard on a fresh database, sets it up through
// its first-run route, makes a read-write token, and points the provider
// at it through SWITCHYARD_URL and SWITCHYARD_TOKEN.
func startServer(ctx context.Context) (func(), error) {
	admin := os.Getenv("TEST_DATABASE_URL")
	if admin == "" {
		return nil, errors.New("TEST_DATABASE_URL is not set")
	}
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	for _, sql := range []string{"DROP DATABASE IF EXISTS " + dbName + " WITH (FORCE)", "CREATE DATABASE " + dbName} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			return nil, fmt.Errorf("%s: %w", sql, err)
		}
	}
	drop := func() {
		c, err := pgx.Connect(context.Background(), admin)
		if err == nil {
			_, _ = c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+dbName+" WITH (FORCE)")
			_ = c.Close(context.Background())
		}
	}
	u, err := url.Parse(admin)
	if err != nil {
		return drop, err
	}
	u.Path = "/" + dbName
	env := map[string]string{"DATABASE_URL": u.String(), "HOST": "127.0.0.1", "PORT": "0", "COOKIE_SECURE": "false",
		"RUST_LOG": "error", "SESSION_SECRET": "terraform-acceptance-secret-of-32-characters", "PUBLIC_DIR": os.TempDir()}
	cfg, err := config.FromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		return drop, err
	}
	a, err := app.New(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		return drop, err
	}
	served := make(chan struct{})
	go func() { _ = a.Serve(ctx); close(served) }()
	stop := func() {
		select {
		case <-served:
		case <-time.After(10 * time.Second):
		}
		drop()
	}
	base := "http://" + a.Addr()
	token, err := setUp(ctx, base)
	if err != nil {
		return stop, err
	}
	os.Setenv("SWITCHYARD_URL", base)
	os.Setenv("SWITCHYARD_TOKEN", token)
	api, err = apiclient.NewClientWithResponses(base, apiclient.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+token)
		return nil
	}))
	return stop, err
}

// setUp creates the workspace's first admin and a read-write token of
// theirs, as a person would on the dashboard.
func setUp(ctx context.Context, base string) (string, error) {
	c, err := apiclient.NewClientWithResponses(base)
	if err != nil {
		return "", err
	}
	workspace := "Acceptance"
	r, err := c.SetupWorkspaceWithResponse(ctx, apiclient.SetupRequest{WorkspaceName: &workspace,
		Name: "Ada Admin", Email: "ada@example.com", Password: "correct horse battery"})
	if err != nil {
		return "", err
	}
	if r.StatusCode() != http.StatusOK {
		return "", fmt.Errorf("setup: %d %s", r.StatusCode(), r.Body)
	}
	var cookies []string
	for _, ck := range r.HTTPResponse.Cookies() {
		cookies = append(cookies, ck.Name+"="+ck.Value)
	}
	t, err := c.CreateTokenWithResponse(ctx, apiclient.TokenInput{Name: "terraform acceptance", Scope: apiclient.ReadWrite},
		func(_ context.Context, req *http.Request) error {
			req.Header.Set("Cookie", strings.Join(cookies, "; "))
			req.Header.Set("X-Service-Request", "true")
			return nil
		})
	if err != nil {
		return "", err
	}
	if t.StatusCode() != http.StatusOK {
		return "", fmt.Errorf("create token: %d %s", t.StatusCode(), t.Body)
	}
	return t.JSON200.Token, nil
}

func ptr[T any](v T) *T { return &v }
