package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/google/uuid"
)

// The notification events, and the test event of an integration's test
// route (docs/reference/notifications.md, Events).
const (
	EventFlagCreated           = "flag.created"
	EventFlagUpdated           = "flag.updated"
	EventFlagDeleted           = "flag.deleted"
	EventFlagPromoted          = "flag.promoted"
	EventChangeRequestOpened   = "change_request.opened"
	EventChangeRequestApproved = "change_request.approved"
	EventChangeRequestRejected = "change_request.rejected"
	EventReleaseStarted        = "release.started"
	EventReleaseAdvanced       = "release.advanced"
	EventReleasePaused         = "release.paused"
	EventReleaseResumed        = "release.resumed"
	EventReleaseRolledBack     = "release.rolled_back"
	EventReleaseCompleted      = "release.completed"
	EventReleaseCancelled      = "release.cancelled"
	EventTest                  = "test"
)

// Events lists the events an integration may subscribe to.
var Events = []string{
	EventFlagCreated, EventFlagUpdated, EventFlagDeleted, EventFlagPromoted,
	EventChangeRequestOpened, EventChangeRequestApproved, EventChangeRequestRejected,
	EventReleaseStarted, EventReleaseAdvanced, EventReleasePaused, EventReleaseResumed,
	EventReleaseRolledBack, EventReleaseCompleted, EventReleaseCancelled,
}

// Headers of a webhook delivery (docs/reference/notifications.md, Webhook
// request).
const (
	HeaderEvent     = "X-Service-Event"
	HeaderDelivery  = "X-Service-Delivery"
	HeaderSignature = "X-Service-Signature"
)

// DefaultBackoff is the wait before each retry of a failed delivery: three
// retries, 1 s, 5 s and 15 s after the failures
// (docs/reference/notifications.md, Retries).
var DefaultBackoff = []time.Duration{time.Second, 5 * time.Second, 15 * time.Second}

// Limits of one outbound request.
const (
	DefaultTimeout   = 5 * time.Second
	maxResponseBytes = 64 << 10 // read at most this much of a receiver's answer
	maxLoggedBody    = 4 << 10  // the delivery log keeps this much of it
)

// Ref names an environment or a project in a payload.
type Ref struct {
	ID   uuid.UUID `json:"id"`
	Name string    `json:"name"`
}

// Envelope is one notification: the webhook payload body, field for field
// (docs/reference/notifications.md, Webhook body), plus what chat messages
// show.
type Envelope struct {
	Event       string          `json:"event"`
	DeliveryID  uuid.UUID       `json:"delivery_id"`
	OccurredAt  time.Time       `json:"occurred_at"`
	Environment Ref             `json:"environment"`
	Project     Ref             `json:"project"`
	Actor       string          `json:"actor"`
	FlagKey     string          `json:"flag_key"`
	Data        json.RawMessage `json:"data"`

	// Flag is the flag as it stands after the event, for chat messages;
	// nil when there is none. Not part of the webhook body.
	Flag *FlagState `json:"-"`
}

// FlagState is what chat messages show of a flag.
type FlagState struct {
	IsEnabled         bool `json:"is_enabled"`
	RolloutPercentage *int `json:"rollout_percentage"`
}

// Result is the outcome of one delivery attempt, as the delivery log keeps
// it: StatusCode and ResponseBody are nil when the request never completed,
// and Error then says why.
type Result struct {
	StatusCode   *int
	ResponseBody *string
	Error        *string
}

// OK reports whether the receiver accepted the delivery (2xx).
func (r Result) OK() bool { return r.StatusCode != nil && *r.StatusCode >= 200 && *r.StatusCode < 300 }

// Rejected reports whether the receiver answered 4xx: a chat provider
// rejected the message, and sending it again would not help.
func (r Result) Rejected() bool {
	return r.StatusCode != nil && *r.StatusCode >= 400 && *r.StatusCode < 500
}

// Config holds a Client's optional settings; its zero value works.
type Config struct {
	Timeout   time.Duration // per request; DefaultTimeout when zero
	Transport http.RoundTripper
}

// Client sends notifications over HTTP.
type Client struct {
	http *http.Client
}

// NewClient returns a Client.
func NewClient(cfg Config) *Client {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	return &Client{http: &http.Client{
		Timeout:   cfg.Timeout,
		Transport: cfg.Transport,
		// A receiver's redirect is its answer: following it could lead a
		// signed payload, or a chat credential, somewhere else.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Sign returns the X-Service-Signature value of body under secret:
// "sha256=" and the lowercase hex HMAC-SHA256.
func Sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// WebhookBody is the JSON body of a webhook delivery.
func WebhookBody(e Envelope) ([]byte, error) {
	if len(e.Data) == 0 {
		e.Data = json.RawMessage("null")
	}
	return json.Marshal(e)
}

// SendWebhook makes one delivery attempt of e to url, signed with secret
// when it is not empty.
func (c *Client) SendWebhook(ctx context.Context, url, secret string, e Envelope) Result {
	body, err := WebhookBody(e)
	if err != nil {
		return failed(fmt.Errorf("encode payload: %w", err))
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "Switchyard-Webhook/1")
	h.Set(HeaderEvent, e.Event)
	h.Set(HeaderDelivery, e.DeliveryID.String())
	if secret != "" {
		h.Set(HeaderSignature, Sign(secret, body))
	}
	return c.post(ctx, url, h, body)
}

// SendChat makes one delivery attempt of e to a chat provider's incoming
// webhook; kind is "slack" or "teams".
func (c *Client) SendChat(ctx context.Context, kind, url string, e Envelope) Result {
	body, err := ChatMessage(kind, e)
	if err != nil {
		return failed(err)
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "Switchyard-Chat/1")
	return c.post(ctx, url, h, body)
}

func (c *Client) post(ctx context.Context, target string, h http.Header, body []byte) Result {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return failed(fmt.Errorf("build request: %w", err))
	}
	req.Header = h
	resp, err := c.http.Do(req)
	if err != nil {
		return failed(transportError(err))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	status := resp.StatusCode
	r := Result{StatusCode: &status}
	logged := truncate(raw, maxLoggedBody)
	r.ResponseBody = &logged
	if err != nil {
		msg := "reading the response: " + transportError(err).Error()
		r.Error = &msg
	}
	return r
}

// transportError says why a request never completed, without the URL: a
// chat URL is a credential and must not reach the delivery log.
func transportError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		if ue.Timeout() {
			return errors.New("timed out")
		}
		err = ue.Err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return errors.New("timed out")
	}
	return err
}

func failed(err error) Result {
	msg := err.Error()
	return Result{Error: &msg}
}

// truncate cuts b to at most n bytes without splitting a UTF-8 sequence.
func truncate(b []byte, n int) string {
	if len(b) <= n {
		return string(bytes.ToValidUTF8(b, []byte("\uFFFD")))
	}
	cut := n
	for cut > 0 && cut > n-4 && b[cut]&0xC0 == 0x80 {
		cut--
	}
	return string(bytes.ToValidUTF8(b[:cut], []byte("\uFFFD")))
}
