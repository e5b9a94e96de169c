// Package benchenv is what the load tools under bench/ share: a scratch
// database made anew for a run, servers started in the tool's process, and
// an API client.
package benchenv

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/server/app"
	"github.com/switchyard/switchyard/server/auth"
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

// AdminToken gives the user email a read-write personal access token and
// returns it.
func AdminToken(ctx context.Context, pool *pgxpool.Pool, email string) (string, error) {
	full, prefix, hash, err := auth.NewCredential(auth.TokenKind)
	if err != nil {
		return "", err
	}
	_, err = pool.Exec(ctx, `INSERT INTO personal_access_tokens (user_id, name, token_hash, prefix, scope)
		SELECT id, 'bench', $1, $2, 'read_write' FROM users WHERE email = $3`, hash, prefix, email)
	return full, err
}

// Production returns the seeded Default project's Production environment
// and the project.
func Production(ctx context.Context, pool *pgxpool.Pool) (envID, projectID uuid.UUID, err error) {
	err = pool.QueryRow(ctx, `SELECT e.id, p.id FROM environments e JOIN projects p ON p.id = e.project_id
		WHERE p.slug = 'default' AND e.slug = 'production'`).Scan(&envID, &projectID)
	return envID, projectID, err
}

// Client sends the tools' API requests with a bearer credential.
type Client struct{ Token string }

// Do sends body (JSON; a PATCH as a merge patch) to url and decodes the
// answer into out, when given; an answer of 300 or more is an error.
func (c Client) Do(ctx context.Context, method, url string, body, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	switch {
	case method == http.MethodPatch:
		req.Header.Set("Content-Type", "application/merge-patch+json")
	case body != nil:
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %d %s", method, url, resp.StatusCode, raw)
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}

// Admin is the workspace admin Settings seeds on first boot.
const Admin = "admin@bench.example"

// Settings are a bench server's environment on database dbURL and Redis
// redisURL (empty: the in-process bus), with secret as SESSION_SECRET (the
// audit trail's key derives from it): loopback on a free port, errors
// only, the seeded Admin.
func Settings(dbURL, redisURL, secret string) map[string]string {
	return map[string]string{
		"DATABASE_URL": dbURL, "REDIS_URL": redisURL, "HOST": "127.0.0.1", "PORT": "0", "COOKIE_SECURE": "false",
		"RUST_LOG": "error", "SESSION_SECRET": secret, "ADMIN_EMAIL": Admin, "ADMIN_PASSWORD": "bench-password-1",
		"PUBLIC_DIR": os.TempDir(),
	}
}
