package notify_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/server/notify"
)

func envelope(event string) notify.Envelope {
	pct := 25
	return notify.Envelope{
		Event: event, DeliveryID: uuid.New(), OccurredAt: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC),
		Environment: notify.Ref{ID: uuid.New(), Name: "Production"}, Project: notify.Ref{ID: uuid.New(), Name: "Default"},
		Actor: "ada@example.com", FlagKey: "checkout", Data: json.RawMessage(`{"reason":"not <now>","patch":{"is_enabled":true}}`),
		Flag: &notify.FlagState{IsEnabled: true, RolloutPercentage: &pct},
	}
}

func TestSendWebhookSignsTheRawBody(t *testing.T) {
	t.Parallel()
	var got *http.Request
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, body = r, mustRead(r.Body)
		w.WriteHeader(201)
		_, _ = w.Write([]byte(strings.Repeat("é", 5000))) // over the 4 KiB logged
	}))
	defer srv.Close()
	e := envelope("flag.updated")
	res := notify.NewClient(notify.Config{}).SendWebhook(context.Background(), srv.URL, "shh", e)
	if !res.OK() || *res.StatusCode != 201 || res.Error != nil {
		t.Fatalf("result = %+v", res)
	}
	// An independent verification, as a receiver would write it.
	mac := hmac.New(sha256.New, []byte("shh"))
	mac.Write(body)
	if want := "sha256=" + hex.EncodeToString(mac.Sum(nil)); got.Header.Get("X-Service-Signature") != want {
		t.Errorf("signature = %q, want %q", got.Header.Get("X-Service-Signature"), want)
	}
	if got.Method != "POST" || got.Header.Get("Content-Type") != "application/json" || got.Header.Get("X-Service-Event") != "flag.updated" ||
		got.Header.Get("X-Service-Delivery") != e.DeliveryID.String() {
		t.Errorf("request = %s %v", got.Method, got.Header)
	}
	var p map[string]any
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"event", "delivery_id", "occurred_at", "environment", "project", "actor", "flag_key", "data"} {
		if _, ok := p[k]; !ok {
			t.Errorf("payload lacks %s: %s", k, body)
		}
	}
	if len(p) != 8 {
		t.Errorf("payload has extra fields: %s", body)
	}
	if n := len(*res.ResponseBody); n > 4096 || n < 4090 {
		t.Errorf("logged response body is %d bytes, want it cut at 4 KiB", n)
	}
	if !strings.HasSuffix(*res.ResponseBody, "é") {
		t.Error("truncation split a character")
	}
}

func TestSendWebhookWithoutSecretIsUnsigned(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := r.Header["X-Service-Signature"]; ok {
			t.Error("unsigned webhook carried a signature header")
		}
	}))
	defer srv.Close()
	if res := notify.NewClient(notify.Config{}).SendWebhook(context.Background(), srv.URL, "", envelope("flag.created")); !res.OK() {
		t.Errorf("result = %+v", res)
	}
}

func TestSendFailures(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
	}))
	defer slow.Close()
	defer close(release) // before Close, which waits for the handler
	res := notify.NewClient(notify.Config{Timeout: 50 * time.Millisecond}).SendWebhook(context.Background(), slow.URL, "", envelope("flag.created"))
	if res.StatusCode != nil || res.ResponseBody != nil || res.Error == nil || *res.Error != "timed out" {
		t.Errorf("timeout result = %+v", res)
	}
	res = notify.NewClient(notify.Config{}).SendChat(context.Background(), "slack", "http://127.0.0.1:1/secret-token", envelope("flag.created"))
	if res.StatusCode != nil || res.Error == nil || strings.Contains(*res.Error, "secret-token") {
		t.Errorf("refused result = %+v (the error must not repeat the URL)", res)
	}
	redirect := httptest.NewServer(http.RedirectHandler("https://elsewhere.example/", http.StatusTemporaryRedirect))
	defer redirect.Close()
	res = notify.NewClient(notify.Config{}).SendWebhook(context.Background(), redirect.URL, "", envelope("flag.created"))
	if res.StatusCode == nil || *res.StatusCode != 307 || res.OK() {
		t.Errorf("redirect result = %+v, want the 307 itself, not followed", res)
	}
}

func TestValidChatURL(t *testing.T) {
	t.Parallel()
	for url, ok := range map[string]bool{
		"https://hooks.slack.com/services/x":  true,
		"https://example.com:8443/x":          true,
		"http://127.0.0.1/x":                  true,
		"http://127.0.0.1:9000/x":             true,
		"http://localhost:3000/x":             true,
		"http://[::1]/x":                      true,
		"http://[::1]:8080/x":                 true,
		"http://127.0.0.1.evil.example/x":     false,
		"http://localhost.evil.example/x":     false,
		"http://evil.example/127.0.0.1":       false,
		"http://127.0.0.1@evil.example/x":     false,
		"http://[::1].evil.example/x":         false,
		"http://[0:0:0:0:0:0:0:1]/x":          false,
		"http://0x7f000001/x":                 false,
		"http://127.1/x":                      false,
		"http://LOCALHOST/x":                  false,
		"http://example.com/x":                false,
		"ftp://127.0.0.1/x":                   false,
		"//127.0.0.1/x":                       false,
		"not a url":                           false,
		"https://user:pass@hooks.example.com": false,
	} {
		if got := notify.ValidChatURL(url) == ""; got != ok {
			t.Errorf("ValidChatURL(%q) accepted = %v, want %v", url, got, ok)
		}
	}
}

func TestChatMessages(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ event, color string }{
		{"change_request.opened", "#f59e0b"}, {"change_request.approved", "#22c55e"},
		{"change_request.rejected", "#ef4444"}, {"flag.deleted", "#ef4444"},
	} {
		raw, err := notify.ChatMessage("slack", envelope(c.event))
		if err != nil {
			t.Fatal(err)
		}
		var slack struct {
			Text        string `json:"text"`
			Attachments []struct {
				Color  string           `json:"color"`
				Blocks []map[string]any `json:"blocks"`
			} `json:"attachments"`
		}
		if err := json.Unmarshal(raw, &slack); err != nil || len(slack.Attachments) != 1 || slack.Attachments[0].Color != c.color || len(slack.Attachments[0].Blocks) < 2 {
			t.Errorf("slack %s = %s", c.event, raw)
		}
		raw, err = notify.ChatMessage("teams", envelope(c.event))
		if err != nil {
			t.Fatal(err)
		}
		var teams struct {
			Type     string `json:"@type"`
			Theme    string `json:"themeColor"`
			Sections []struct {
				Facts []struct{ Name, Value string } `json:"facts"`
			} `json:"sections"`
		}
		if err := json.Unmarshal(raw, &teams); err != nil || teams.Type != "MessageCard" || teams.Theme != c.color || len(teams.Sections) != 1 {
			t.Fatalf("teams %s = %s", c.event, raw)
		}
		facts := map[string]string{}
		for _, f := range teams.Sections[0].Facts {
			facts[f.Name] = f.Value
		}
		if facts["Environment"] != "Production" || facts["Flag"] != "checkout" || facts["Enabled"] != "on" || facts["Rollout"] != "25%" || facts["Actor"] != "ada@example.com" {
			t.Errorf("teams facts = %v", facts)
		}
		if _, has := facts["Reason"]; has != (c.event == "change_request.rejected") {
			t.Errorf("%s: reason present = %v", c.event, has)
		}
	}
	raw, _ := notify.ChatMessage("slack", envelope("change_request.rejected"))
	if !strings.Contains(string(raw), "not \\u0026lt;now\\u0026gt;") {
		t.Errorf("slack text is not escaped: %s", raw)
	}
	if _, err := notify.ChatMessage("discord", envelope("flag.created")); err == nil {
		t.Error("unknown provider rendered")
	}
	if got := notify.Preview("https://hooks.slack.com/services/T0/B0/XyZ9"); got != "…XyZ9" {
		t.Errorf("Preview = %q", got)
	}
}

func mustRead(r io.Reader) []byte {
	b, _ := io.ReadAll(r)
	return b
}
