package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchyard/switchyard/cli"
	"github.com/switchyard/switchyard/server/app"
	"github.com/switchyard/switchyard/server/internal/apptest"
)

var (
	mcpReadTools  = []string{"get_flag", "list_change_requests", "list_environments", "list_flags", "list_projects"}
	mcpWriteTools = []string{"create_flag", "pause_release", "rollback_release", "start_release", "toggle_flag", "update_flag"}
)

// startMCP runs `switchyard mcp` through cli.Run with token, its standard
// input and output joined by pipes to the SDK's own client, and returns
// the client's session. At the end of the test the session closes, and the
// command must then end with exit 0.
func startMCP(t *testing.T, s *apptest.Server, token string) *mcp.ClientSession {
	t.Helper()
	vars := map[string]string{"SWITCHYARD_URL": s.URL, "SWITCHYARD_TOKEN": token, "HOME": t.TempDir()}
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	var stderr bytes.Buffer
	code := make(chan int, 1)
	go func() {
		code <- cli.Run(context.Background(), []string{"mcp"}, func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
			toServer, fromServer, &stderr, func(context.Context) error { return errors.New("served") })
		fromServer.Close() // the client sees the end of the server's output
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "switchyard-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: toClient, Writer: fromClient}, nil)
	if err != nil {
		select {
		case c := <-code:
			t.Fatalf("switchyard mcp ended with %d: %s", c, stderr.String())
		default:
			t.Fatalf("connect: %v", err)
		}
	}
	t.Cleanup(func() {
		cs.Close()
		select {
		case c := <-code:
			if c != cli.ExitOK {
				t.Errorf("switchyard mcp = %d after the session closed: %s", c, stderr.String())
			}
		case <-time.After(10 * time.Second):
			t.Errorf("switchyard mcp did not end after the session closed")
		}
	})
	return cs
}

func mcpToolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		if tool.Description == "" {
			t.Errorf("tool %s has no description", tool.Name)
		}
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// mcpCall calls a tool and returns its result: the text, and the
// structured content decoded into out when out is not nil.
func mcpCall(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	if out != nil {
		if res.IsError {
			t.Fatalf("%s(%v) is an error: %s", name, args, mcpText(res))
		}
		raw, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s: structured content %s: %v", name, raw, err)
		}
	}
	return res
}

func mcpText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

type mcpFlag struct {
	Key               string `json:"key"`
	IsEnabled         bool   `json:"is_enabled"`
	RolloutPercentage *int   `json:"rollout_percentage"`
	FlagType          string `json:"flag_type"`
	DefaultValue      any    `json:"default_value"`
	Version           int64  `json:"version"`
}

// A read_write token gets every tool, a read_only token the read tools
// only; a token the server refuses stops the command before it serves.
func TestMCPToolsByScope(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	id, token := s.User(t, "admin@example.com", "admin")
	readOnly := s.Token(t, id, "read_only", nil)

	all := append(slices.Clone(mcpReadTools), mcpWriteTools...)
	slices.Sort(all)
	if got := mcpToolNames(t, startMCP(t, s, token)); !slices.Equal(got, all) {
		t.Errorf("read_write token's tools = %v, want %v", got, all)
	}
	if got := mcpToolNames(t, startMCP(t, s, readOnly)); !slices.Equal(got, mcpReadTools) {
		t.Errorf("read_only token's tools = %v, want %v", got, mcpReadTools)
	}
	if code, _, errOut := runCLI(t, s, "pat_not-a-token", nil, "mcp"); code != cli.ExitError || !strings.Contains(errOut, "401") {
		t.Errorf("mcp with a bad token = %d %q, want exit 1 with the server's 401", code, errOut)
	}
}

// The tools read and write through the API: list and read flags, change
// one by merge patch, create one, toggle one where approval is required
// (a change request, not a change), start, pause and roll back a release;
// refusals are tool errors with the server's message.
func TestMCPTools(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil, app.WithoutScheduler())
	_, token := s.User(t, "admin@example.com", "admin")
	_, envs := s.DefaultProject(t)
	fe := &flagEnv{s: s, token: token, envs: map[string]string{}}
	for slug, id := range envs {
		fe.envs[slug] = id.String()
	}
	for _, env := range []string{"production", "staging"} {
		if status, f := fe.call(t, "POST", fe.flags(env), map[string]any{"key": "checkout", "is_enabled": false}); status != 200 {
			t.Fatalf("create checkout in %s = %d %v", env, status, f)
		}
	}
	cs := startMCP(t, s, token)

	var projects struct {
		Projects []struct {
			Slug         string `json:"slug"`
			Environments []struct {
				Slug string `json:"slug"`
			} `json:"environments"`
		} `json:"projects"`
	}
	mcpCall(t, cs, "list_projects", nil, &projects)
	if len(projects.Projects) != 1 || projects.Projects[0].Slug != "default" || len(projects.Projects[0].Environments) != 3 {
		t.Errorf("list_projects = %+v", projects)
	}
	var environments struct {
		Environments []struct {
			Slug            string `json:"slug"`
			RequireApproval bool   `json:"require_approval"`
		} `json:"environments"`
	}
	mcpCall(t, cs, "list_environments", map[string]any{"project": "default"}, &environments)
	if len(environments.Environments) != 3 {
		t.Errorf("list_environments = %+v", environments)
	}

	var list struct{ Flags []mcpFlag }
	mcpCall(t, cs, "list_flags", map[string]any{"env": "production"}, &list)
	if len(list.Flags) != 1 || list.Flags[0].Key != "checkout" {
		t.Errorf("list_flags = %+v", list)
	}
	var got struct {
		Flag   mcpFlag
		Status *struct {
			FlagKey string `json:"flag_key"`
			Status  string `json:"status"`
		}
	}
	mcpCall(t, cs, "get_flag", map[string]any{"env": "production", "project": "default", "key": "checkout"}, &got)
	if got.Flag.Key != "checkout" || got.Flag.Version != 1 || got.Status == nil || got.Status.FlagKey != "checkout" || got.Status.Status != "new" {
		t.Errorf("get_flag = %+v %+v", got.Flag, got.Status)
	}

	// update_flag changes the flag, as the API then shows.
	var updated struct{ Flag mcpFlag }
	mcpCall(t, cs, "update_flag", map[string]any{"env": "production", "key": "checkout",
		"patch": map[string]any{"rollout_percentage": 25, "is_enabled": true}}, &updated)
	if updated.Flag.RolloutPercentage == nil || *updated.Flag.RolloutPercentage != 25 {
		t.Errorf("update_flag = %+v", updated)
	}
	if status, f := fe.call(t, "GET", fe.flags("production")+"/checkout", nil); status != 200 ||
		field(f, "rollout_percentage") != 25.0 || field(f, "is_enabled") != true || field(f, "version") != 2.0 {
		t.Errorf("after update_flag the API shows %d %v", status, f)
	}

	// create_flag makes a flag of the given fields.
	var created struct{ Flag mcpFlag }
	mcpCall(t, cs, "create_flag", map[string]any{"env": "production", "key": "banner", "flag_type": "string",
		"is_enabled": true, "default_value": "hello", "tags": []string{"web"}}, &created)
	if status, f := fe.call(t, "GET", fe.flags("production")+"/banner", nil); status != 200 ||
		field(f, "default_value") != "hello" || field(f, "flag_type") != "string" || field(f, "is_enabled") != true {
		t.Errorf("after create_flag the API shows %d %v", status, f)
	}

	// Where approval is required, toggle_flag opens a change request.
	fe.requireApproval(t, "staging", true)
	var opened struct {
		Flag          *mcpFlag
		ChangeRequest *struct {
			ID      int64  `json:"id"`
			FlagKey string `json:"flag_key"`
			Status  string `json:"status"`
		} `json:"change_request"`
		Message string
	}
	res := mcpCall(t, cs, "toggle_flag", map[string]any{"env": "staging", "key": "checkout", "on": true}, &opened)
	if opened.Flag != nil || opened.ChangeRequest == nil || opened.ChangeRequest.Status != "pending" ||
		!strings.Contains(opened.Message, "change request") || !strings.Contains(mcpText(res), "change request") {
		t.Fatalf("toggle_flag under approval = %s", mcpText(res))
	}
	if status, f := fe.call(t, "GET", fe.flags("staging")+"/checkout", nil); status != 200 || field(f, "is_enabled") != false {
		t.Errorf("the flag changed before approval: %d %v", status, f)
	}
	var pending struct {
		ChangeRequests []struct {
			ID int64 `json:"id"`
		} `json:"change_requests"`
	}
	mcpCall(t, cs, "list_change_requests", map[string]any{"env": "staging", "status": "pending"}, &pending)
	if len(pending.ChangeRequests) != 1 || pending.ChangeRequests[0].ID != opened.ChangeRequest.ID {
		t.Errorf("list_change_requests = %+v, want change request %d", pending, opened.ChangeRequest.ID)
	}

	// A guarded release: started, paused by its flag's key, rolled back by id.
	var started struct {
		Release struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		}
	}
	mcpCall(t, cs, "start_release", map[string]any{"env": "production", "key": "checkout",
		"stages":  []map[string]any{{"percentage": 10, "duration_seconds": 3600}, {"percentage": 50, "duration_seconds": 3600}},
		"metrics": []map[string]any{{"event_key": "checkout-error", "kind": "conversion", "bad_direction": "increase", "tolerance": 0.02}},
	}, &started)
	if started.Release.Status != "running" {
		t.Fatalf("start_release = %+v", started)
	}
	var paused, rolledBack struct{ Release struct{ Status string } }
	mcpCall(t, cs, "pause_release", map[string]any{"env": "production", "key": "checkout"}, &paused)
	mcpCall(t, cs, "rollback_release", map[string]any{"env": "production", "id": started.Release.ID}, &rolledBack)
	if paused.Release.Status != "paused" || rolledBack.Release.Status != "rolled_back" {
		t.Errorf("pause_release = %+v, rollback_release = %+v", paused, rolledBack)
	}
	if status, f := fe.call(t, "GET", fe.flags("production")+"/checkout", nil); status != 200 || field(f, "rollout_percentage") != 0.0 {
		t.Errorf("after rollback_release the API shows %d %v", status, f)
	}

	// Refusals: tool errors carrying the reason, not protocol errors.
	for _, c := range []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"list_flags", map[string]any{"env": "nowhere"}, []string{`no environment "nowhere"`}},
		{"get_flag", map[string]any{"env": "production", "key": "missing"}, []string{"404"}},
		{"update_flag", map[string]any{"env": "production", "key": "checkout", "patch": map[string]any{"rollout_percentage": 101}}, []string{"rollout_percentage", "422"}},
		{"pause_release", map[string]any{"env": "production", "key": "checkout"}, []string{"no running or paused release"}},
		{"toggle_flag", map[string]any{"env": "production", "key": "checkout"}, []string{"on"}}, // the schema wants on
	} {
		res := mcpCall(t, cs, c.tool, c.args, nil)
		text := mcpText(res)
		if !res.IsError {
			t.Errorf("%s(%v) is no error: %s", c.tool, c.args, text)
		}
		for _, w := range c.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s(%v) error %q does not say %q", c.tool, c.args, text, w)
			}
		}
	}
}
