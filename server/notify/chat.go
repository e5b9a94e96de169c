package notify

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// Chat providers (docs/reference/notifications.md, Chat providers).
const (
	KindSlack = "slack"
	KindTeams = "teams"
)

// Colours of chat messages (docs/reference/notifications.md, Chat messages):
// amber for a queued change, green for an approval, red for a rejection or a
// deletion; other events use the product's default colour.
const (
	ColorQueued   = "#f59e0b"
	ColorApproved = "#22c55e"
	ColorRejected = "#ef4444"
	ColorDefault  = "#6366f1"
)

// ValidChatURL checks an incoming-webhook URL (docs/reference/notifications.md,
// Integration records): https anywhere, plaintext http only when the host is
// exactly 127.0.0.1, localhost or [::1]. It returns a message for the client,
// or "".
func ValidChatURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return "must be an absolute https URL"
	}
	if u.User != nil {
		return "must not carry credentials before the host"
	}
	switch u.Scheme {
	case "https":
		return ""
	case "http":
		// Hostname strips the port and the brackets of an IPv6 literal; the
		// comparison is exact, so 127.0.0.1.evil.example is not loopback.
		switch u.Hostname() {
		case "127.0.0.1", "localhost":
			return ""
		case "::1":
			if strings.HasPrefix(u.Host, "[::1]") {
				return ""
			}
		}
		return "plain http is allowed only for 127.0.0.1, localhost and [::1]; use https"
	}
	return "must be an absolute https URL"
}

// ValidWebhookURL checks a webhook's URL: an absolute http or https URL.
func ValidWebhookURL(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "must be an absolute http or https URL"
	}
	if h := u.Hostname(); h == "" || (strings.Contains(h, ":") && net.ParseIP(h) == nil) {
		return "must be an absolute http or https URL"
	}
	return ""
}

// Preview is what listings show of a chat URL: "…" and its last 4
// characters (docs/reference/notifications.md, Integration records).
func Preview(raw string) string {
	r := []rune(raw)
	if len(r) > 4 {
		r = r[len(r)-4:]
	}
	return "…" + string(r)
}

// Color is the colour of an event's chat message.
func Color(event string) string {
	switch event {
	case EventChangeRequestOpened:
		return ColorQueued
	case EventChangeRequestApproved:
		return ColorApproved
	case EventChangeRequestRejected, EventFlagDeleted, EventReleaseRolledBack:
		return ColorRejected
	case EventReleasePaused:
		return ColorQueued
	case EventReleaseCompleted:
		return ColorApproved
	}
	return ColorDefault
}

// fact is one labelled line of a chat message.
type fact struct{ name, value string }

// summary is the text content every chat message carries
// (docs/reference/notifications.md, Chat messages): environment, flag key,
// enabled state, rollout percentage, actor and, for rejections, the reason.
func summary(e Envelope) (title string, facts []fact) {
	titles := map[string]string{
		EventFlagCreated:           "Flag created",
		EventFlagUpdated:           "Flag updated",
		EventFlagDeleted:           "Flag deleted",
		EventFlagPromoted:          "Flag promoted",
		EventChangeRequestOpened:   "Change request awaiting approval",
		EventChangeRequestApproved: "Change request approved",
		EventChangeRequestRejected: "Change request rejected",
		EventReleaseStarted:        "Release started",
		EventReleaseAdvanced:       "Release advanced",
		EventReleasePaused:         "Release paused",
		EventReleaseResumed:        "Release resumed",
		EventReleaseRolledBack:     "Release rolled back",
		EventReleaseCompleted:      "Release completed",
		EventReleaseCancelled:      "Release cancelled",
		EventTest:                  "Test notification from Switchyard",
	}
	title = titles[e.Event]
	if title == "" {
		title = e.Event
	}
	title = fmt.Sprintf("%s: %s", title, e.FlagKey)
	facts = []fact{
		{"Environment", e.Environment.Name},
		{"Flag", e.FlagKey},
	}
	if e.Flag != nil {
		state := "off"
		if e.Flag.IsEnabled {
			state = "on"
		}
		rollout := 100
		if e.Flag.RolloutPercentage != nil {
			rollout = *e.Flag.RolloutPercentage
		}
		facts = append(facts, fact{"Enabled", state}, fact{"Rollout", fmt.Sprintf("%d%%", rollout)})
	}
	facts = append(facts, fact{"Actor", e.Actor})
	var cr struct {
		Reason *string         `json:"reason"`
		Patch  json.RawMessage `json:"patch"`
	}
	if strings.HasPrefix(e.Event, "change_request.") && json.Unmarshal(e.Data, &cr) == nil {
		if len(cr.Patch) > 0 {
			facts = append(facts, fact{"Change", string(cr.Patch)})
		}
		if e.Event == EventChangeRequestRejected {
			reason := "(none given)"
			if cr.Reason != nil && *cr.Reason != "" {
				reason = *cr.Reason
			}
			facts = append(facts, fact{"Reason", reason})
		}
	}
	var rel struct {
		Reason     *string `json:"reason"`
		StageIndex int     `json:"stage_index"`
		Stages     []struct {
			Percentage int `json:"percentage"`
		} `json:"stages"`
	}
	if strings.HasPrefix(e.Event, "release.") && json.Unmarshal(e.Data, &rel) == nil {
		if rel.StageIndex < len(rel.Stages) {
			facts = append(facts, fact{"Stage", fmt.Sprintf("%d of %d (%d%%)", rel.StageIndex+1, len(rel.Stages), rel.Stages[rel.StageIndex].Percentage)})
		}
		if rel.Reason != nil && *rel.Reason != "" {
			facts = append(facts, fact{"Reason", *rel.Reason})
		}
	}
	return title, facts
}

// ChatMessage renders e in the native format of a provider: for Slack,
// Block Kit blocks inside an attachment with the event's colour; for Teams,
// a MessageCard with themeColor and facts.
func ChatMessage(kind string, e Envelope) ([]byte, error) {
	title, facts := summary(e)
	color := Color(e.Event)
	switch kind {
	case KindSlack:
		fields := make([]map[string]any, 0, len(facts))
		for _, f := range facts {
			fields = append(fields, map[string]any{"type": "mrkdwn", "text": fmt.Sprintf("*%s*\n%s", f.name, slackEscape(f.value))})
		}
		blocks := []map[string]any{
			{"type": "header", "text": map[string]any{"type": "plain_text", "text": title}},
		}
		// Slack allows at most 10 fields per section.
		for len(fields) > 0 {
			n := min(len(fields), 10)
			blocks = append(blocks, map[string]any{"type": "section", "fields": fields[:n]})
			fields = fields[n:]
		}
		return json.Marshal(map[string]any{
			"text":        title, // the notification text of clients without blocks
			"attachments": []map[string]any{{"color": color, "blocks": blocks}},
		})
	case KindTeams:
		tf := make([]map[string]string, 0, len(facts))
		for _, f := range facts {
			tf = append(tf, map[string]string{"name": f.name, "value": f.value})
		}
		return json.Marshal(map[string]any{
			"@type":      "MessageCard",
			"@context":   "https://schema.org/extensions",
			"summary":    title,
			"themeColor": color,
			"title":      title,
			"sections":   []map[string]any{{"facts": tf}},
		})
	}
	return nil, fmt.Errorf("unknown chat provider %q", kind)
}

// slackEscape escapes the three characters Slack's mrkdwn treats as markup.
func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
