package ofrep

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/switchyard/switchyard/sdkgo/eval"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/etag"
)

// maxBody is the request body limit: 1 MiB, 413 beyond
// (docs/reference/errors.md, Too large).
const maxBody = 1 << 20

// OFREP error codes (OpenFeature's error codes).
const (
	codeInvalidContext = "INVALID_CONTEXT"
	codeFlagNotFound   = "FLAG_NOT_FOUND"
)

// evalContext is a decoded evaluation context: the user key and the
// attributes.
type evalContext struct {
	user  string
	attrs map[string]any
}

// errInvalidContext is a request body OFREP cannot read; its text goes into
// errorDetails.
type errInvalidContext string

func (e errInvalidContext) Error() string { return string(e) }

// maxPooledBuffer is the largest buffer kept for reuse: request bodies are
// small, and one 1 MiB body must not stay pinned in the pool.
const maxPooledBuffer = 64 << 10

// buffer takes a cleared buffer from the handler's pool; put returns it.
// Request bodies and answers pass through one on every evaluation.
func (h *Handler) buffer() *bytes.Buffer {
	if b, ok := h.buffers.Get().(*bytes.Buffer); ok {
		return b
	}
	return bytes.NewBuffer(make([]byte, 0, 2048))
}

func (h *Handler) put(b *bytes.Buffer) {
	if b.Cap() <= maxPooledBuffer {
		b.Reset()
		h.buffers.Put(b)
	}
}

// readBody reads the request body, up to the 1 MiB limit, into a pooled
// buffer (put it back when done: nothing may keep its bytes).
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) (*bytes.Buffer, error) {
	buf := h.buffer()
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, maxBody)); err != nil {
		h.put(buf)
		if tooLarge := (*http.MaxBytesError)(nil); errors.As(err, &tooLarge) {
			return nil, apperr.E(apperr.TooLarge, "request body is larger than 1 MiB")
		}
		return nil, apperr.Wrap(apperr.BadRequest, "could not read the request body", err)
	}
	return buf, nil
}

// parseContext reads {"context": {...}} (docs/reference/ofrep.md, Request):
// targetingKey, when a non-empty string, is the user key; every other entry
// whose value is a string, number or boolean is an attribute; other values
// are ignored. No body or no context is an anonymous evaluation without
// attributes; a context that is not an object, null included, is invalid.
// The bodies providers send are read by scanContext in one pass; whatever it
// declines, encoding/json decides.
func parseContext(raw []byte) (evalContext, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return evalContext{}, nil
	}
	if c, ok := scanContext(raw); ok {
		return c, nil
	}
	return decodeContext(raw)
}

// decodeContext is parseContext with encoding/json, for any non-empty,
// trimmed body: the reference scanContext must agree with. The context is
// decoded straight into the attribute map (contextMember).
func decodeContext(raw []byte) (evalContext, error) {
	var body struct {
		Context contextMember `json:"context"`
	}
	if raw[0] != '{' {
		return evalContext{}, errInvalidContext("the request body must be a JSON object")
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field == "context" || errors.Is(err, errContextNull) {
			return evalContext{}, errInvalidContext("context must be a JSON object")
		}
		return evalContext{}, errInvalidContext("the request body is not valid JSON: " + err.Error())
	}
	if body.Context.attrs == nil {
		return evalContext{}, nil // absent
	}
	attrs := body.Context.attrs
	var c evalContext
	for k, v := range attrs {
		if k == "targetingKey" {
			c.user, _ = v.(string)
			delete(attrs, k)
			continue
		}
		switch v.(type) {
		case string, float64, bool:
		default:
			delete(attrs, k)
		}
	}
	c.attrs = attrs
	return c, nil
}

// contextMember is the body's context as encoding/json decodes it. A
// pointer field cannot tell null from absent, and only absent is allowed,
// so null is an error here. Anything else goes straight into the map (a
// repeated context merges into it, as encoding/json merges objects).
type contextMember struct {
	attrs map[string]any
}

// errContextNull is a context that is JSON null.
var errContextNull = errors.New("context is null")

func (c *contextMember) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return errContextNull
	}
	if c.attrs == nil {
		c.attrs = map[string]any{}
	}
	return json.Unmarshal(b, &c.attrs)
}

// result is one flag's evaluation as OFREP shows it.
type result struct {
	Key      string   `json:"key"`
	Value    any      `json:"value,omitempty"`
	Reason   string   `json:"reason"`
	Variant  *string  `json:"variant,omitempty"` // nil with the value; "" is a value's rendering
	Metadata metadata `json:"metadata"`
}

// metadata is a result's flag metadata (a struct, not a map: it is encoded
// for every evaluation).
type metadata struct {
	Version int64 `json:"version"`
}

// evaluate evaluates one flag with the one evaluator. A result that is JSON
// null leaves value and variant out, which OFREP reads as "use the code
// default" (docs/reference/ofrep.md, Result of one flag).
func evaluate(flags *eval.Snapshot, info eval.FlagInfo, key string, c evalContext) result {
	r := flags.Evaluate(key, c.user, c.attrs)
	out := result{Key: key, Reason: reason(r.Reason), Metadata: metadata{Version: info.Version}}
	if r.Value == nil {
		return out
	}
	out.Value = r.Value
	if info.Type == eval.FlagTypeInteger {
		if f, ok := r.Value.(float64); ok {
			// A JSON integer, never an exponent (float64 would print 1e+21).
			out.Value = json.RawMessage(strconv.FormatFloat(f, 'f', -1, 64))
		}
	}
	out.Variant = ptr(eval.RenderValue(r.Value))
	return out
}

// reason maps the evaluator's reasons to OpenFeature's, exactly as the Go
// SDK's OpenFeature provider does.
func reason(r eval.Reason) string {
	switch r {
	case eval.ReasonRuleMatch:
		return "TARGETING_MATCH"
	case eval.ReasonRolloutIn, eval.ReasonRolloutOut, eval.ReasonVariant:
		return "SPLIT"
	case eval.ReasonDisabled, eval.ReasonPrerequisiteFailed:
		return "DISABLED"
	case eval.ReasonDefault:
		return "DEFAULT"
	}
	return "UNKNOWN"
}

// visible reports whether p may see a flag: client keys see client-side
// flags only (docs/reference/ofrep.md, Client-side availability).
func visible(p *auth.Principal, info eval.FlagInfo) bool {
	return !p.Client || info.ClientSide
}

// evaluateOne serves POST /ofrep/v1/evaluate/flags/{key}.
func (h *Handler) evaluateOne(w http.ResponseWriter, r *http.Request, key string) {
	p, body, env, ok := h.begin(w, r)
	if !ok {
		return
	}
	c, ok := contextOf(w, body.Bytes(), &key)
	h.put(body) // parseContext copied what it keeps
	if !ok {
		return
	}
	info, ok := env.Flags.Info(key)
	if !ok || !visible(p, info) {
		// A hidden flag answers exactly like a missing one.
		writeJSON(w, http.StatusNotFound, map[string]string{"key": key, "errorCode": codeFlagNotFound, "errorDetails": "flag " + key + " not found"})
		return
	}
	res := evaluate(env.Flags, info, key, c)
	if c.user != "" {
		h.cfg.Exposures.Record(p, key, c.user, renderOrNull(res))
	}
	out := h.buffer()
	defer h.put(out)
	enc, err := appendResult(out.AvailableBuffer(), res)
	out.Write(enc) // in place unless it grew: then the pool keeps the larger buffer
	h.writeEncoded(w, r, http.StatusOK, out.Bytes(), err)
}

func renderOrNull(res result) string {
	if res.Variant == nil {
		return "null"
	}
	return *res.Variant
}

func ptr[T any](v T) *T { return &v }

// begin is what both evaluation routes do first: authenticate the key, read
// the body and take the key's environment from the hub. When it reports
// false it has answered through the API's error writer; otherwise the
// caller puts the body back.
func (h *Handler) begin(w http.ResponseWriter, r *http.Request) (*auth.Principal, *bytes.Buffer, Environment, bool) {
	p, err := h.authenticate(r)
	if err != nil {
		h.cfg.Errors(w, r, err)
		return nil, nil, Environment{}, false
	}
	body, err := h.readBody(w, r)
	if err != nil {
		h.cfg.Errors(w, r, err)
		return nil, nil, Environment{}, false
	}
	env, err := h.cfg.Flags.Environment(r.Context(), p.EnvironmentID)
	if err != nil {
		h.put(body)
		h.cfg.Errors(w, r, err)
		return nil, nil, Environment{}, false
	}
	return p, body, env, true
}

// contextOf parses the body's context; when it cannot, it answers OFREP's 400
// (with the flag's key on the single route, flagKey non-nil) and reports
// false.
func contextOf(w http.ResponseWriter, raw []byte, flagKey *string) (evalContext, bool) {
	c, err := parseContext(raw)
	if err != nil {
		errBody := map[string]string{"errorCode": codeInvalidContext, "errorDetails": err.Error()}
		if flagKey != nil {
			errBody["key"] = *flagKey
		}
		writeJSON(w, http.StatusBadRequest, errBody)
		return evalContext{}, false
	}
	return c, true
}

// bulkResponse is the bulk evaluation's answer.
type bulkResponse struct {
	Flags        []result      `json:"flags"`
	EventStreams []eventStream `json:"eventStreams"`
}

// eventStream advertises the change-notification stream (OFREP ADR-0008).
type eventStream struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

// evaluateAll serves POST /ofrep/v1/evaluate/flags: every flag the key may
// see, archived ones included, with a strong ETag over the environment's
// flag state, the key's kind and the request body. An unchanged environment
// answers 304 before anything is evaluated.
func (h *Handler) evaluateAll(w http.ResponseWriter, r *http.Request) {
	p, body, env, ok := h.begin(w, r)
	if !ok {
		return
	}
	// The tag hashes the body as sent: identical requests (a provider
	// polling with one context) get the same tag, and a poll of an
	// unchanged environment answers 304 without even decoding the context.
	tag := bulkETag(env.Tag, p.Client, body.Bytes())
	if etag.Matches(r.Header.Get("If-None-Match"), tag) {
		h.put(body)
		w.Header().Set("ETag", tag)
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusNotModified)
		return
	}
	c, ok := contextOf(w, body.Bytes(), nil)
	h.put(body)
	if !ok {
		return
	}
	w.Header().Set("ETag", tag)
	w.Header().Set("Cache-Control", "no-cache")
	flags := make([]result, 0, env.Flags.Len())
	for _, key := range env.Flags.Keys() {
		info, _ := env.Flags.Info(key)
		if visible(p, info) {
			flags = append(flags, evaluate(env.Flags, info, key, c))
		}
	}
	out := h.buffer()
	defer h.put(out)
	enc, err := appendBulk(out.AvailableBuffer(), flags, []eventStream{{Type: "sse", URL: h.streamURL(r, p)}})
	out.Write(enc) // in place unless it grew: then the pool keeps the larger buffer
	h.writeEncoded(w, r, http.StatusOK, out.Bytes(), err)
}

// bulkETag is a strong entity tag of one bulk answer: equal for identical
// requests against the same flags, new when any flag, the key's kind (which
// decides what is visible) or the body, and so the context, changes.
func bulkETag(envTag string, client bool, body []byte) string {
	h := sha256.New()
	h.Write([]byte(envTag))
	if client {
		h.Write([]byte{0, 'c'})
	} else {
		h.Write([]byte{0, 's'})
	}
	h.Write(body)
	var sum [sha256.Size]byte
	var tag [2 + 32]byte // a quoted hex half of the hash
	tag[0], tag[len(tag)-1] = '"', '"'
	hex.Encode(tag[1:len(tag)-1], h.Sum(sum[:0])[:16])
	return string(tag[:])
}

// configuration serves GET /ofrep/v1/configuration.
func (h *Handler) configuration(w http.ResponseWriter, r *http.Request) {
	if _, err := h.authenticate(r); err != nil {
		h.cfg.Errors(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"name": "Switchyard",
		"capabilities": map[string]any{
			"cacheInvalidation": map[string]any{
				"polling": map[string]any{"enabled": true, "minPollingIntervalMs": h.cfg.MinPollingInterval.Milliseconds()},
			},
			"flagEvaluation": map[string]any{"supportedTypes": []string{"boolean", "string", "int", "float", "object"}},
		},
	})
}

// writeEncoded writes an answer encoded by appendResult or appendBulk; an
// encoding error (a value encoding/json refuses) goes to the error writer.
func (h *Handler) writeEncoded(w http.ResponseWriter, r *http.Request, status int, body []byte, err error) {
	if err != nil {
		h.cfg.Errors(w, r, fmt.Errorf("encode ofrep answer: %w", err))
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "application/json")
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, `{"error":"internal error"}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
