package app_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard/switchyard/server/internal/apptest"
)

// trailActions lists the actions of entries, oldest first.
func trailActions(entries []trailEntry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[len(entries)-1-i] = e.Action
	}
	return out
}

// inProduction checks that an entry names the Default project's production
// environment.
func (fe *flagEnv) inProduction(t *testing.T, e trailEntry) {
	t.Helper()
	if e.EnvironmentID == nil || e.EnvironmentID.String() != fe.envs["production"] || e.ProjectID == nil || e.ProjectID.String() != fe.project {
		t.Errorf("%s: environment %v project %v, want production of %s", e.Action, e.EnvironmentID, e.ProjectID, fe.project)
	}
}

// actorIs checks an entry's actor kind and email.
func actorIs(t *testing.T, e trailEntry, kind, email string) {
	t.Helper()
	if e.Actor.Kind != kind || e.Actor.Email == nil || *e.Actor.Email != email {
		t.Errorf("%s: actor %+v, want %s %s", e.Action, e.Actor, kind, email)
	}
}

// flagsAndReleases keeps the flag and release entries of entries.
func flagsAndReleases(entries []trailEntry) []trailEntry {
	return slices.DeleteFunc(entries, func(e trailEntry) bool { return e.Resource.Type != "flag" && e.Resource.Type != "release" })
}

// A change request's life is in the trail: opened, approved and applied
// (after the flag's update by the reviewer), rejected, withdrawn.
func TestAuditGovernanceChangeRequests(t *testing.T) {
	t.Parallel()
	ce := newCREnv(t)
	approved := ce.open(t, map[string]any{"is_enabled": true})
	must(t, ce.s, ce.editorB, "POST", ce.cr(approved)+"/approve", nil, http.StatusOK, nil)
	rejected := ce.open(t, map[string]any{"rollout_percentage": 90})
	must(t, ce.s, ce.editorB, "POST", ce.cr(rejected)+"/reject", map[string]any{"reason": "too fast"}, http.StatusNoContent, nil)
	withdrawn := ce.open(t, map[string]any{"rollout_percentage": 20})
	must(t, ce.s, ce.editorA, "DELETE", ce.cr(withdrawn), nil, http.StatusNoContent, nil)

	entries := trail(t, ce.s, ce.token, "environment_id="+ce.envs["production"])
	var got []string
	for _, e := range entries {
		if e.Resource.Type == "change_request" || e.Resource.Type == "flag" {
			got = append([]string{e.Action + " " + e.Resource.ID}, got...)
		}
	}
	want := []string{
		"flag.created gate",
		"change_request.created " + approved, "flag.updated gate", "change_request.approved " + approved, "change_request.applied " + approved,
		"change_request.created " + rejected, "change_request.rejected " + rejected,
		"change_request.created " + withdrawn, "change_request.updated " + withdrawn,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("trail (-want +got):\n%s", d)
	}
	for _, e := range entries {
		if e.Resource.Type == "change_request" && (e.Resource.Key == nil || *e.Resource.Key != "gate") {
			t.Errorf("%s: resource %+v, want the flag's key", e.Action, e.Resource)
		}
		ce.inProduction(t, e)
	}

	opened := trailFind(t, entries, "change_request.created", approved)
	actorIs(t, opened, "token", "a@example.com")
	if a := trailState(t, opened.After); trailState(t, opened.Before) != nil || a["status"] != "pending" || field(a, "patch", "is_enabled") != true || a["requested_by"] != "a@example.com" {
		t.Errorf("opened: before %s after %s", opened.Before, opened.After)
	}
	update := trailFind(t, entries, "flag.updated", "gate")
	actorIs(t, update, "token", "b@example.com")
	if trailState(t, update.Before)["is_enabled"] != false || trailState(t, update.After)["is_enabled"] != true {
		t.Errorf("the approved write: before %s after %s", update.Before, update.After)
	}
	approval := trailFind(t, entries, "change_request.approved", approved)
	actorIs(t, approval, "token", "b@example.com")
	if b, a := trailState(t, approval.Before), trailState(t, approval.After); b["status"] != "pending" || a["status"] != "approved" || a["reviewed_by"] != "b@example.com" {
		t.Errorf("approved: before %s after %s", approval.Before, approval.After)
	}
	applied := trailFind(t, entries, "change_request.applied", approved)
	actorIs(t, applied, "token", "b@example.com")
	if trailState(t, applied.After)["status"] != "approved" {
		t.Errorf("applied: after %s", applied.After)
	}
	rejection := trailFind(t, entries, "change_request.rejected", rejected)
	actorIs(t, rejection, "token", "b@example.com")
	if a := trailState(t, rejection.After); a["status"] != "rejected" || a["reason"] != "too fast" {
		t.Errorf("rejected: after %s", rejection.After)
	}
	withdrawal := trailFind(t, entries, "change_request.updated", withdrawn)
	actorIs(t, withdrawal, "token", "a@example.com")
	if b, a := trailState(t, withdrawal.Before), trailState(t, withdrawal.After); b["status"] != "pending" || a["status"] != "cancelled" {
		t.Errorf("withdrawn: before %s after %s", withdrawal.Before, withdrawal.After)
	}
}

// Scheduled changes: created and deleted by people; applied by the
// runner, whose flag write and the change's new state are the schedule's,
// naming the change and its author. A failure that repeats is one entry.
func TestAuditGovernanceSchedules(t *testing.T) {
	t.Parallel()
	clock := apptest.NewClock(time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC))
	fe := newClockEnv(t, clock)
	fe.call(t, "POST", fe.flags("production"), map[string]any{"key": "f", "is_enabled": false})
	fe.call(t, "POST", fe.flags("production"), map[string]any{"key": "gone", "is_enabled": false})
	schedule := func(key string, in time.Duration, patch map[string]any) string {
		t.Helper()
		var sc map[string]any
		must(t, fe.s, fe.token, "POST", fe.flags("production")+"/"+key+"/scheduled-changes",
			map[string]any{"scheduled_at": clock.Now().Add(in).Format(time.RFC3339Nano), "patch": patch}, http.StatusOK, &sc)
		return sc["id"].(string)
	}
	applied := schedule("f", time.Hour, map[string]any{"is_enabled": true})
	cancelled := schedule("f", 2*time.Hour, map[string]any{"rollout_percentage": 5})
	failing := schedule("gone", time.Hour, map[string]any{"is_enabled": true})
	must(t, fe.s, fe.token, "DELETE", fe.env("production")+"/scheduled-changes/"+cancelled, nil, http.StatusNoContent, nil)
	must(t, fe.s, fe.token, "DELETE", fe.flags("production")+"/gone", nil, http.StatusNoContent, nil)

	created := trailFind(t, trail(t, fe.s, fe.token, "resource_type=schedule&resource_id="+applied), "schedule.created", applied)
	actorIs(t, created, "token", "admin@example.com")
	fe.inProduction(t, created)
	if a := trailState(t, created.After); trailState(t, created.Before) != nil || a["flag_key"] != "f" || field(a, "patch", "is_enabled") != true || a["executed_at"] != nil {
		t.Errorf("created: before %s after %s", created.Before, created.After)
	}
	deleted := trailFind(t, trail(t, fe.s, fe.token, "resource_id="+cancelled), "schedule.deleted", cancelled)
	actorIs(t, deleted, "token", "admin@example.com")
	if trailState(t, deleted.After) != nil || trailState(t, deleted.Before)["id"] != cancelled || *deleted.Resource.Key != "f" {
		t.Errorf("deleted: before %s after %s resource %+v", deleted.Before, deleted.After, deleted.Resource)
	}

	scheduleAttempts := func(id string) float64 {
		_, list := fe.call(t, "GET", fe.env("production")+"/scheduled-changes", nil)
		for _, sc := range list.([]any) {
			if field(sc, "id") == id {
				return field(sc, "attempts").(float64)
			}
		}
		return -1
	}
	clock.Advance(time.Hour)
	waitFor(t, "the due changes' first attempts", func() bool { return scheduleAttempts(applied) == 1 && scheduleAttempts(failing) == 1 })
	clock.Advance(61 * time.Second)
	waitFor(t, "the failing change's retry", func() bool { return scheduleAttempts(failing) == 2 })

	byRunner := trail(t, fe.s, fe.token, "environment_id="+fe.envs["production"]+"&action=schedule.updated")
	if len(byRunner) != 2 {
		t.Fatalf("%d schedule.updated entries, want one for the applied change and one for the failure: %+v", len(byRunner), byRunner)
	}
	for _, e := range byRunner {
		if e.Actor.Kind != "schedule" || e.Actor.ID == nil || *e.Actor.ID != e.Resource.ID || e.Actor.Email == nil || *e.Actor.Email != "admin@example.com" {
			t.Errorf("%s of %s: actor %+v, want the schedule and its author", e.Action, e.Resource.ID, e.Actor)
		}
	}
	done := trailFind(t, byRunner, "schedule.updated", applied)
	if b, a := trailState(t, done.Before), trailState(t, done.After); b["executed_at"] != nil || a["executed_at"] == nil || a["attempts"] != float64(1) {
		t.Errorf("applied: before %s after %s", done.Before, done.After)
	}
	failed := trailFind(t, byRunner, "schedule.updated", failing)
	if a := trailState(t, failed.After); a["executed_at"] != nil || a["last_error"] == nil || a["attempts"] != float64(1) {
		t.Errorf("failed: after %s", failed.After)
	}
	write := trail(t, fe.s, fe.token, "resource_type=flag&resource_id=f")[0]
	if write.Action != "flag.updated" || write.Actor.Kind != "schedule" || write.Actor.ID == nil || *write.Actor.ID != applied ||
		write.Actor.Email == nil || *write.Actor.Email != "admin@example.com" {
		t.Errorf("the scheduled write: %s by %+v", write.Action, write.Actor)
	}
	if trailState(t, write.Before)["is_enabled"] != false || trailState(t, write.After)["is_enabled"] != true {
		t.Errorf("the scheduled write: before %s after %s", write.Before, write.After)
	}
	// The environment's log still names the author, source schedule.
	if l := envLog(t, fe, "production")[0]; l.ActorEmail != "admin@example.com" || !strings.Contains(string(l.Metadata), `"schedule"`) {
		t.Errorf("environment log entry %+v", l)
	}
}

// Webhooks and chat integrations are entries of their project and
// environment; their secrets are in none of them.
func TestAuditGovernanceWebhooksAndChat(t *testing.T) {
	t.Parallel()
	fe := newGovEnv(t)
	const secret, newSecret = "s3cret-webhook-value", "an0ther-webhook-secret"
	const chatURL = "https://hooks.slack.com/services/T0001/B0001/tokenvalue1234wxyz"
	hooks, chats := fe.env("production")+"/webhooks", fe.env("production")+"/integrations"
	var hook, chat map[string]any
	must(t, fe.s, fe.token, "POST", hooks, map[string]any{"name": "ci", "url": "https://hooks.example.com/x", "secret": secret}, http.StatusOK, &hook)
	must(t, fe.s, fe.token, "PATCH", hooks+"/"+hook["id"].(string), map[string]any{"name": "deploys", "secret": newSecret, "enabled": false}, http.StatusOK, nil)
	must(t, fe.s, fe.token, "DELETE", hooks+"/"+hook["id"].(string), nil, http.StatusNoContent, nil)
	must(t, fe.s, fe.token, "POST", chats, map[string]any{"kind": "slack", "name": "alerts", "webhook_url": chatURL}, http.StatusOK, &chat)
	must(t, fe.s, fe.token, "PATCH", chats+"/"+chat["id"].(string), map[string]any{"name": "ops", "events": []string{"flag.updated"}}, http.StatusOK, nil)
	must(t, fe.s, fe.token, "DELETE", chats+"/"+chat["id"].(string), nil, http.StatusNoContent, nil)

	entries := slices.DeleteFunc(trail(t, fe.s, fe.token, "environment_id="+fe.envs["production"]), func(e trailEntry) bool {
		return e.Resource.Type != "webhook" && e.Resource.Type != "chat"
	})
	want := []string{"webhook.created", "webhook.updated", "webhook.deleted", "chat.created", "chat.updated", "chat.deleted"}
	if d := cmp.Diff(want, trailActions(entries)); d != "" {
		t.Fatalf("trail (-want +got):\n%s", d)
	}
	for _, e := range entries {
		fe.inProduction(t, e)
		actorIs(t, e, "token", "admin@example.com")
		if id := map[string]any{"webhook": hook["id"], "chat": chat["id"]}[e.Resource.Type]; e.Resource.ID != id || e.Resource.Name == nil {
			t.Errorf("%s: resource %+v", e.Action, e.Resource)
		}
	}
	created := trailFind(t, entries, "webhook.created", "")
	if d := cmp.Diff(hook, trailState(t, created.After)); d != "" {
		t.Errorf("webhook.created: after is not the API's webhook (-api +trail):\n%s", d)
	}
	updated := trailFind(t, entries, "webhook.updated", "")
	if b, a := trailState(t, updated.Before), trailState(t, updated.After); b["name"] != "ci" || a["name"] != "deploys" || a["has_secret"] != true || a["enabled"] != false {
		t.Errorf("webhook.updated: before %s after %s", updated.Before, updated.After)
	}
	chatCreated := trailFind(t, entries, "chat.created", "")
	if d := cmp.Diff(chat, trailState(t, chatCreated.After)); d != "" {
		t.Errorf("chat.created: after is not the API's integration (-api +trail):\n%s", d)
	}
	chatUpdated := trailFind(t, entries, "chat.updated", "")
	if a := trailState(t, chatUpdated.After); a["name"] != "ops" || fmt.Sprint(a["events"]) != "[flag.updated]" || a["webhook_url_preview"] != "…wxyz" {
		t.Errorf("chat.updated: after %s", chatUpdated.After)
	}
	// No secret in any entry, as read or as exported.
	for _, path := range []string{"/api/audit?limit=500", "/api/audit/export"} {
		status, raw := call(t, fe.s, fe.token, "GET", path, nil)
		for _, s := range []string{secret, newSecret, "tokenvalue1234", chatURL} {
			if status != http.StatusOK || strings.Contains(string(raw), s) {
				t.Errorf("GET %s = %d, holding %q: %s", path, status, s, raw)
			}
		}
	}
}

// Every release event is an entry: by the person who acted, or by the
// release when a check decides; the release's own flag writes are the
// release's.
func TestAuditGovernanceReleasesByPeople(t *testing.T) {
	t.Parallel()
	fe := newReleaseAPIEnv(t)
	fe.createFlag(t, map[string]any{"key": "checkout", "is_enabled": true, "rollout_percentage": 30})
	rel := fe.startRelease(t, "checkout")
	id := rel["id"].(string)
	for _, action := range []string{"pause", "resume", "rollback"} {
		must(t, fe.s, fe.token, "POST", fe.releasesPath("production")+"/"+id+"/"+action, nil, http.StatusOK, nil)
	}
	// A person's change of the flag cancels the next one.
	second := fe.startRelease(t, "checkout")["id"].(string)
	must(t, fe.s, fe.token, "PATCH", fe.flags("production")+"/checkout", map[string]any{"rollout_percentage": 40}, http.StatusOK, nil)

	entries := flagsAndReleases(trail(t, fe.s, fe.token, "environment_id="+fe.envs["production"]))
	var got []string
	for _, e := range entries {
		got = append([]string{e.Action + " " + e.Actor.Kind}, got...)
		fe.inProduction(t, e)
	}
	want := []string{
		"flag.created token",
		"flag.updated release", "release.started token", "release.paused token", "release.resumed token",
		"flag.updated release", "release.rolled_back token",
		"flag.updated release", "release.started token", "flag.updated token", "release.cancelled token",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("trail: action and actor kind (-want +got):\n%s", d)
	}
	for _, e := range entries {
		switch {
		case e.Resource.Type == "release":
			if (e.Resource.ID != id && e.Resource.ID != second) || e.Resource.Key == nil || *e.Resource.Key != "checkout" {
				t.Errorf("%s: resource %+v", e.Action, e.Resource)
			}
			actorIs(t, e, "token", "admin@example.com")
		case e.Actor.Kind == "release":
			if e.Actor.ID == nil || (*e.Actor.ID != id && *e.Actor.ID != second) || e.Actor.Label == nil || *e.Actor.Label != "checkout" {
				t.Errorf("%s: actor %+v, want the release", e.Action, e.Actor)
			}
		}
	}
	started := trailFind(t, entries, "release.started", id)
	if a := trailState(t, started.After); trailState(t, started.Before) != nil || a["status"] != "running" || a["previous_rollout_percentage"] != float64(30) {
		t.Errorf("started: before %s after %s", started.Before, started.After)
	}
	paused := trailFind(t, entries, "release.paused", id)
	if trailState(t, paused.Before)["status"] != "running" || trailState(t, paused.After)["status"] != "paused" {
		t.Errorf("paused: before %s after %s", paused.Before, paused.After)
	}
	rolledBack := trailFind(t, entries, "release.rolled_back", id)
	if a := trailState(t, rolledBack.After); a["status"] != "rolled_back" || a["ended_at"] == nil {
		t.Errorf("rolled back: after %s", rolledBack.After)
	}
	cancelled := trailFind(t, entries, "release.cancelled", second)
	if a := trailState(t, cancelled.After); a["status"] != "cancelled" || a["reason"] != "flag changed by admin@example.com" {
		t.Errorf("cancelled: after %s", cancelled.After)
	}
	// The first stage's write, by the release: 30 % to 5 %.
	var startWrite trailEntry
	for _, e := range entries {
		if e.Action == "flag.updated" && e.Actor.Kind == "release" && *e.Actor.ID == id {
			startWrite = e // oldest last: ends at the start's write
		}
	}
	if trailState(t, startWrite.Before)["rollout_percentage"] != float64(30) || trailState(t, startWrite.After)["rollout_percentage"] != float64(5) {
		t.Errorf("the start's write: before %s after %s", startWrite.Before, startWrite.After)
	}
	// The environment's log is as it was: the release's writes by its creator.
	var actions []string
	for _, l := range envLog(t, fe, "production") {
		actions = append([]string{l.Action + " " + l.ActorEmail}, actions...)
	}
	wantLog := []string{
		"create admin@example.com", "update admin@example.com", "release.started admin@example.com",
		"release.paused admin@example.com", "release.resumed admin@example.com", "update admin@example.com",
		"release.rolled_back admin@example.com", "update admin@example.com", "release.started admin@example.com",
		"update admin@example.com", "release.cancelled admin@example.com",
	}
	if d := cmp.Diff(wantLog, actions); d != "" {
		t.Errorf("environment log (-want +got):\n%s", d)
	}
}

// What the guard decides on a check (advance, complete) is the release's.
func TestAuditGovernanceReleasesByTheGuard(t *testing.T) {
	t.Parallel()
	re := newReleaseEnv(t)
	id := re.start(t, map[string]any{
		"stages":    []map[string]any{{"percentage": 20, "duration_seconds": 600}, {"percentage": 60, "duration_seconds": 600}},
		"metrics":   []map[string]any{{"event_key": "purchase", "kind": "conversion", "bad_direction": "decrease", "tolerance": 0.1}},
		"min_users": 20, "check_interval_seconds": 3600,
	})
	re.clock.Advance(601 * time.Second)
	waitFor(t, "the second stage", func() bool { return field(re.release(t, id), "stage_index") == float64(1) })
	re.clock.Advance(601 * time.Second)
	re.waitStatus(t, id, "completed")

	entries := flagsAndReleases(trail(t, re.s, re.token, "environment_id="+re.envs["production"]))
	var got []string
	for _, e := range entries {
		got = append([]string{e.Action + " " + e.Actor.Kind}, got...)
	}
	want := []string{
		"flag.created token", "flag.updated release", "release.started token",
		"flag.updated release", "release.advanced release", "release.completed release",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("trail: action and actor kind (-want +got):\n%s", d)
	}
	advanced := trailFind(t, entries, "release.advanced", id)
	if advanced.Actor.ID == nil || *advanced.Actor.ID != id || *advanced.Actor.Label != re.flag {
		t.Errorf("advanced: actor %+v", advanced.Actor)
	}
	if trailState(t, advanced.Before)["stage_index"] != float64(0) || trailState(t, advanced.After)["stage_index"] != float64(1) {
		t.Errorf("advanced: before %s after %s", advanced.Before, advanced.After)
	}
	if a := trailState(t, trailFind(t, entries, "release.completed", id).After); a["status"] != "completed" {
		t.Errorf("completed: after %v", a)
	}
}
