// Package benchenv is what the load tools under bench/ share: a scratch
// database made anew for a run, and servers started in the tool's process.
package benchenv

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"

	"github.com/jackc/pgx/v5"

	"github.com/switchyard/switchyard/server/app"
	"github.com/switchyard/switchyard/server/config"
)

// FreshDatabase drops and creates database name through adminURL (a role
// that may create databases) and returns its URL.
func FreshDatabase(ctx context.Context, adminURL, name string) (string, error) {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return "", fmt.Errorf("connect to %s: %w", adminURL, err)
	}
	defer conn.Close(ctx)
	for _, sql := range []string{"DROP DATABASE IF EXISTS " + name + " WITH (FORCE)", "CREATE DATABASE " + name} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			return "", fmt.Errorf("%s: %w", sql, err)
		}
	}
	u, err := url.Parse(adminURL)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

// DropDatabase drops database name, ending the servers' connections to it.
func DropDatabase(ctx context.Context, adminURL, name string) error {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	return err
}

// StartApp starts a server in this process on the settings env and returns
// its base URL; it serves until ctx ends.
func StartApp(ctx context.Context, env map[string]string, opts ...app.Option) (string, error) {
	cfg, err := config.FromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		return "", err
	}
	a, err := app.New(ctx, cfg, slog.New(slog.DiscardHandler), opts...)
	if err != nil {
		return "", err
	}
	go func() { _ = a.Serve(ctx) }()
	return "http://" + a.Addr(), nil
}
