package app_test

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestChatIntegrationValidation(t *testing.T) {
	t.Parallel()
	fe := newGovEnv(t)
	base := fe.env("production") + "/integrations"
	cases := []struct {
		name string
		body map[string]any
		want int
	}{
		{"https", map[string]any{"kind": "slack", "name": "n", "webhook_url": "https://hooks.slack.com/services/T/B/abcd"}, 200},
		{"http 127.0.0.1 with port", map[string]any{"kind": "slack", "name": "n", "webhook_url": "http://127.0.0.1:8080/hook"}, 200},
		{"http localhost", map[string]any{"kind": "teams", "name": "n", "webhook_url": "http://localhost/hook"}, 200},
		{"http IPv6 loopback", map[string]any{"kind": "teams", "name": "n", "webhook_url": "http://[::1]:9000/hook"}, 200},
		{"http public host", map[string]any{"kind": "slack", "name": "n", "webhook_url": "http://hooks.slack.com/x"}, 422},
		{"lookalike 127.0.0.1.evil.example", map[string]any{"kind": "slack", "name": "n", "webhook_url": "http://127.0.0.1.evil.example/x"}, 422},
		{"lookalike localhost.evil.example", map[string]any{"kind": "slack", "name": "n", "webhook_url": "http://localhost.evil.example/x"}, 422},
		{"credentials before a loopback lookalike", map[string]any{"kind": "slack", "name": "n", "webhook_url": "http://127.0.0.1@evil.example/x"}, 422},
		{"other loopback address", map[string]any{"kind": "slack", "name": "n", "webhook_url": "http://127.0.0.2/x"}, 422},
		{"IPv6 unspecified", map[string]any{"kind": "slack", "name": "n", "webhook_url": "http://[::]/x"}, 422},
		{"not a URL", map[string]any{"kind": "slack", "name": "n", "webhook_url": "hooks.slack.com/x"}, 422},
		{"other scheme", map[string]any{"kind": "slack", "name": "n", "webhook_url": "ftp://example.com/x"}, 422},
		{"unknown kind", map[string]any{"kind": "discord", "name": "n", "webhook_url": "https://example.com/x"}, 422},
		{"unknown event", map[string]any{"kind": "slack", "name": "n", "webhook_url": "https://example.com/x", "events": []string{"flag.exploded"}}, 422},
		{"known events", map[string]any{"kind": "slack", "name": "n", "webhook_url": "https://example.com/x", "events": []string{"flag.deleted", "change_request.rejected"}}, 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, body := fe.call(t, "POST", base, c.body)
			if status != c.want {
				t.Fatalf("= %d %v, want %d", status, body, c.want)
			}
			if status == 200 {
				url := c.body["webhook_url"].(string)
				raw, _ := json.Marshal(body)
				if field(body, "webhook_url_preview") != "…"+url[len(url)-4:] || strings.Contains(string(raw), url) || field(body, "webhook_url") != nil {
					t.Errorf("created = %s, want only a preview of the URL", raw)
				}
			}
		})
	}
	// PATCH validates the same way.
	_, ig := fe.call(t, "POST", base, map[string]any{"kind": "slack", "name": "p", "webhook_url": "https://example.com/abcd"})
	id := field(ig, "id").(string)
	if status, _ := fe.call(t, "PATCH", base+"/"+id, map[string]any{"webhook_url": "http://127.0.0.1.evil.example/x"}); status != 422 {
		t.Errorf("patch to a lookalike = %d, want 422", status)
	}
	status, ig := fe.call(t, "PATCH", base+"/"+id, map[string]any{"webhook_url": "https://example.com/wxyz", "enabled": false, "events": []string{"flag.created"}})
	if status != 200 || field(ig, "webhook_url_preview") != "…wxyz" || field(ig, "enabled") != false || len(field(ig, "events").([]any)) != 1 {
		t.Errorf("patch = %d %v", status, ig)
	}
	if status, _ := fe.call(t, "DELETE", base+"/"+id, nil); status != 204 {
		t.Errorf("delete = %d", status)
	}
	if status, _ := fe.call(t, "DELETE", base+"/"+id, nil); status != 404 {
		t.Errorf("second delete = %d, want 404", status)
	}
	if status, _ := fe.call(t, "POST", base+"/"+id+"/test", nil); status != 404 {
		t.Errorf("test of a deleted integration = %d, want 404", status)
	}
}

func TestChatDelivery(t *testing.T) {
	t.Parallel()
	ce := newCREnv(t)
	slack := newReceiver(t, nil)
	teams := newReceiver(t, nil)
	// Only deletions: the event selection filters.
	deletions := newReceiver(t, nil)
	base := ce.env("production") + "/integrations"
	_, ig := ce.call(t, "POST", base, map[string]any{"kind": "slack", "name": "s", "webhook_url": slack.URL + "/slack"})
	slackID := field(ig, "id").(string)
	ce.call(t, "POST", base, map[string]any{"kind": "teams", "name": "t", "webhook_url": strings.Replace(teams.URL, "127.0.0.1", "localhost", 1)})
	ce.call(t, "POST", base, map[string]any{"kind": "slack", "name": "d", "webhook_url": deletions.URL, "events": []string{"flag.deleted"}})

	id := ce.open(t, map[string]any{"is_enabled": true})
	ce.call(t, "POST", ce.cr(id)+"/reject", map[string]any{"reason": "freeze week"}, ce.editorB)
	waitFor(t, "two chat messages each", func() bool { return len(slack.requests()) == 2 && len(teams.requests()) == 2 })

	var opened, rejected map[string]any
	_ = json.Unmarshal(slack.requests()[0].body, &opened)
	_ = json.Unmarshal(slack.requests()[1].body, &rejected)
	att := field(opened, "attachments").([]any)[0]
	if field(att, "color") != "#f59e0b" || len(field(att, "blocks").([]any)) == 0 {
		t.Errorf("slack opened message = %v", opened)
	}
	if att := field(rejected, "attachments").([]any)[0]; field(att, "color") != "#ef4444" {
		t.Errorf("slack rejected colour = %v", field(att, "color"))
	}
	text := string(slack.requests()[1].body)
	for _, want := range []string{"Production", "gate", "off", "10%", "b@example.com", "freeze week"} {
		if !strings.Contains(text, want) {
			t.Errorf("slack rejection lacks %q: %s", want, text)
		}
	}
	var card map[string]any
	_ = json.Unmarshal(teams.requests()[1].body, &card)
	facts := field(card, "sections").([]any)[0]
	if field(card, "@type") != "MessageCard" || field(card, "themeColor") != "#ef4444" || len(field(facts, "facts").([]any)) < 5 {
		t.Errorf("teams card = %v", card)
	}
	if n := len(deletions.requests()); n != 0 {
		t.Errorf("deletion-only integration got %d messages", n)
	}

	// The delivery rows are written after the receiver has answered: wait
	// for them too, so that the test delivery below is the newest.
	waitFor(t, "the two deliveries recorded", func() bool {
		_, list := ce.call(t, "GET", base+"/"+slackID+"/deliveries", nil)
		rows, _ := list.([]any)
		return len(rows) == 2
	})
	// The test route goes through the real path and answers the delivery row.
	status, d := ce.call(t, "POST", base+"/"+slackID+"/test", nil)
	if status != 200 || field(d, "event") != "test" || field(d, "status_code") != float64(200) || field(d, "integration_id") != slackID {
		t.Fatalf("test = %d %v", status, d)
	}
	_, list := ce.call(t, "GET", base+"/"+slackID+"/deliveries", nil)
	var events []string
	for _, d := range list.([]any) {
		events = append(events, field(d, "event").(string))
	}
	if strings.Join(events, ",") != "test,change_request.rejected,change_request.opened" {
		t.Errorf("deliveries, newest first = %v", events)
	}
}

func TestChatRetries(t *testing.T) {
	t.Parallel()
	fe := newGovEnv(t)
	rejecting := newReceiver(t, func(int) int { return 400 })
	flaky := newReceiver(t, func(n int) int {
		if n == 1 {
			return 502
		}
		return 200
	})
	base := fe.env("production") + "/integrations"
	_, ig := fe.call(t, "POST", base, map[string]any{"kind": "slack", "name": "r", "webhook_url": rejecting.URL})
	rejID := field(ig, "id").(string)
	_, ig = fe.call(t, "POST", base, map[string]any{"kind": "teams", "name": "f", "webhook_url": flaky.URL})
	flakyID := field(ig, "id").(string)
	// Disabled: receives nothing.
	off := newReceiver(t, nil)
	fe.call(t, "POST", base, map[string]any{"kind": "slack", "name": "off", "webhook_url": off.URL, "enabled": false})

	fe.call(t, "POST", fe.flags("production"), map[string]any{"key": "f", "is_enabled": true})
	waitFor(t, "the outbox to drain", func() bool { return fe.count(t, `SELECT count(*) FROM notification_outbox`) == 0 })
	if n := len(rejecting.requests()); n != 1 {
		t.Errorf("a 4xx was retried: %d attempts", n)
	}
	if n := len(flaky.requests()); n != 2 {
		t.Errorf("a 5xx then 200 took %d attempts, want 2", n)
	}
	if n := len(off.requests()); n != 0 {
		t.Errorf("disabled integration got %d messages", n)
	}
	_, ds := fe.call(t, "GET", base+"/"+rejID+"/deliveries", nil)
	if l := ds.([]any); len(l) != 1 || field(l[0], "status_code") != float64(400) || field(l[0], "response_body") != "ok from receiver" {
		t.Errorf("rejected deliveries = %v", ds)
	}
	_, ds = fe.call(t, "GET", base+"/"+flakyID+"/deliveries", nil)
	if l := ds.([]any); len(l) != 2 || field(l[0], "status_code") != float64(200) || field(l[1], "status_code") != float64(502) {
		t.Errorf("flaky deliveries = %v", ds)
	}

	// The log keeps the latest 200 per integration.
	if _, err := fe.s.DB(t).Exec(t.Context(), `INSERT INTO chat_deliveries (integration_id, event, status_code)
		SELECT $1, 'flag.updated', 200 FROM generate_series(1, 250)`, flakyID); err != nil {
		t.Fatal(err)
	}
	if status, _ := fe.call(t, "POST", base+"/"+flakyID+"/test", nil); status != 200 {
		t.Fatalf("test = %d", status)
	}
	if n := fe.count(t, `SELECT count(*) FROM chat_deliveries WHERE integration_id = $1`, flakyID); n != 200 {
		t.Errorf("%d deliveries retained, want 200", n)
	}
	if _, ds := fe.call(t, "GET", base+"/"+flakyID+"/deliveries", nil); len(ds.([]any)) != 200 || field(ds.([]any)[0], "event") != "test" {
		t.Errorf("listing after pruning has %d rows", len(ds.([]any)))
	}
}
