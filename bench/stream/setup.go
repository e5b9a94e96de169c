package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/switchyard/switchyard/server/auth"
)

// fixture is what the tool arranges in a fresh Switchyard database.
type fixture struct {
	Token   string    // personal access token of a workspace admin
	ProdEnv uuid.UUID // the stream environment: one flag
	ProdKey string    // its SDK key
	SnapEnv uuid.UUID // the snapshot environment (staging): -snapshot-flags flags
	SnapKey string
	FlagKey string
	// -mode ofrep: client keys (pk_live_) of staging (the 200-flag
	// environment) and development, where the event-stream flag lives.
	SnapClientKey string
	DevEnv        uuid.UUID
	DevClientKey  string
	ClientSide    bool  // create the snapshot flags with client_side: true
	FlagVer       int64 // the stream flag's current version
	SnapFlags     int
	SnapLength    int
	DBURL         string // the scratch database
}

// arrange creates, directly in SQL as server/internal/apptest does, an admin
// with a token and SDK keys for production and staging.
func arrange(ctx context.Context, dbURL string) (*fixture, error) {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	fx := &fixture{DBURL: dbURL}
	hash, err := auth.HashPassword("bench-password-123")
	if err != nil {
		return nil, err
	}
	var userID int64
	if err := conn.QueryRow(ctx,
		`INSERT INTO users (name, email, password_hash, role) VALUES ('bench', 'bench@example.com', $1, 'admin') RETURNING id`,
		hash).Scan(&userID); err != nil {
		return nil, fmt.Errorf("create user: %w", err)
	}
	full, prefix, th, err := auth.NewCredential(auth.TokenKind)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx,
		`INSERT INTO personal_access_tokens (user_id, name, token_hash, prefix, scope) VALUES ($1, 'bench', $2, $3, 'read_write')`,
		userID, th, prefix); err != nil {
		return nil, fmt.Errorf("create token: %w", err)
	}
	fx.Token = full
	envs := map[string]uuid.UUID{}
	rows, err := conn.Query(ctx, `SELECT e.slug, e.id FROM projects p JOIN environments e ON e.project_id = p.id WHERE p.slug = 'default'`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var slug string
		var id uuid.UUID
		if err := rows.Scan(&slug, &id); err != nil {
			return nil, err
		}
		envs[slug] = id
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	fx.ProdEnv, fx.SnapEnv, fx.DevEnv = envs["production"], envs["staging"], envs["development"]
	if fx.ProdEnv == uuid.Nil || fx.SnapEnv == uuid.Nil || fx.DevEnv == uuid.Nil {
		return nil, fmt.Errorf("seeded production/staging/development environments not found: %v", envs)
	}
	for _, e := range []struct {
		env  uuid.UUID
		kind string
		out  *string
	}{{fx.ProdEnv, "server", &fx.ProdKey}, {fx.SnapEnv, "server", &fx.SnapKey},
		{fx.SnapEnv, "client", &fx.SnapClientKey}, {fx.DevEnv, "client", &fx.DevClientKey}} {
		prefixKind := auth.SDKKeyKind
		if e.kind == "client" {
			prefixKind = auth.ClientKeyKind
		}
		full, prefix, kh, err := auth.NewCredential(prefixKind)
		if err != nil {
			return nil, err
		}
		if _, err := conn.Exec(ctx,
			`INSERT INTO sdk_keys (project_id, environment_id, name, key_hash, prefix, kind)
			 SELECT project_id, id, 'bench', $2, $3, $4 FROM environments WHERE id = $1`, e.env, kh, prefix, e.kind); err != nil {
			return nil, fmt.Errorf("create sdk key: %w", err)
		}
		*e.out = full
	}
	return fx, nil
}

// api calls Switchyard's API with the token and decodes a JSON answer.
func api(ctx context.Context, addr, token, method, path string, body any, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+addr+path, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := apiClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	if resp.StatusCode >= 300 {
		return resp.StatusCode, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	if out != nil {
		return resp.StatusCode, json.Unmarshal(raw, out)
	}
	return resp.StatusCode, nil
}

var apiClient = &http.Client{Timeout: 30 * time.Second}

// createFlags creates the stream flag in production and n flags in the
// snapshot environment.
func createFlags(ctx context.Context, addr string, fx *fixture, n int) error {
	fx.FlagKey = "bench-stream-flag"
	var f struct {
		Version int64 `json:"version"`
	}
	if _, err := api(ctx, addr, fx.Token, http.MethodPost, "/api/environments/"+fx.ProdEnv.String()+"/flags",
		map[string]any{"key": fx.FlagKey, "is_enabled": true, "rollout_percentage": 50, "description": "bench/stream broadcast flag"}, &f); err != nil {
		return err
	}
	fx.FlagVer = f.Version
	for i := range n {
		body := map[string]any{
			"key": fmt.Sprintf("snapshot-flag-%03d", i), "is_enabled": i%3 != 0, "rollout_percentage": (i * 7) % 101,
		}
		if fx.ClientSide {
			body["client_side"] = true
		}
		if _, err := api(ctx, addr, fx.Token, http.MethodPost, "/api/environments/"+fx.SnapEnv.String()+"/flags", body, nil); err != nil {
			return err
		}
	}
	fx.SnapFlags = n
	return nil
}

// patchFlag changes the stream flag's rollout and returns the new version.
func patchFlag(ctx context.Context, addr string, fx *fixture, rollout int) (int64, error) {
	v, err := patchFlagIn(ctx, addr, fx.Token, fx.ProdEnv, fx.FlagKey, rollout)
	if err == nil {
		fx.FlagVer = v
	}
	return v, err
}

// patchFlagIn changes the rollout of flag key in env and returns its new
// version.
func patchFlagIn(ctx context.Context, addr, token string, env uuid.UUID, key string, rollout int) (int64, error) {
	var f struct {
		Version int64 `json:"version"`
	}
	code, err := api(ctx, addr, token, http.MethodPatch, "/api/environments/"+env.String()+"/flags/"+key,
		map[string]any{"rollout_percentage": rollout}, &f)
	if err != nil {
		return 0, err
	}
	if code != http.StatusOK {
		return 0, fmt.Errorf("PATCH flag: status %d (the environment requires approval?)", code)
	}
	return f.Version, nil
}
