package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/measure"
)

// Impression and goal-event batches are the hot path of ingest, so their
// bodies (ImpressionBatch, GoalEventBatch: raw JSON in the document) skip
// the generic schema pass, which would decode every item into maps, and are
// decoded once here into fields that tell absent from empty, checked by the
// same rules as the document's ImpressionInput and GoalEventInput.

// impressionItem is one impression as sent.
type impressionItem struct {
	FlagKey     *string         `json:"flag_key"`
	UserID      *string         `json:"user_id"`
	Value       *string         `json:"value"`
	Context     json.RawMessage `json:"context"`
	EvaluatedAt *time.Time      `json:"evaluated_at"`
}

// goalItem is one goal event as sent.
type goalItem struct {
	EventKey   *string         `json:"event_key"`
	UserID     *string         `json:"user_id"`
	Value      *float64        `json:"value"`
	Context    json.RawMessage `json:"context"`
	OccurredAt *time.Time      `json:"occurred_at"`
}

// maxDetails caps the problems one answer lists.
const maxDetails = 20

func decodeImpressions(body []byte) ([]measure.ImpressionInput, error) {
	var items []impressionItem
	if err := decodeBatch(body, &items); err != nil {
		return nil, err
	}
	var p batchProblems
	out := make([]measure.ImpressionInput, len(items))
	for i, it := range items {
		switch {
		case it.FlagKey == nil:
			p.add(i, "flag_key", "is required")
		case *it.FlagKey == "" || utf8.RuneCountInString(*it.FlagKey) > 100:
			p.add(i, "flag_key", "must be 1 to 100 characters")
		}
		switch {
		case it.Value == nil:
			p.add(i, "value", "is required")
		case utf8.RuneCountInString(*it.Value) > 10000:
			p.add(i, "value", "must be at most 10000 characters")
		}
		checkUserAndContext(&p, i, it.UserID, it.Context)
		if p.full() {
			break
		}
		if it.FlagKey != nil && it.Value != nil {
			out[i] = measure.ImpressionInput{FlagKey: *it.FlagKey, UserID: it.UserID, Value: *it.Value, Context: objectOrNil(it.Context), EvaluatedAt: it.EvaluatedAt}
		}
	}
	return out, p.err()
}

func decodeGoalEvents(body []byte) ([]measure.GoalEventInput, error) {
	var items []goalItem
	if err := decodeBatch(body, &items); err != nil {
		return nil, err
	}
	var p batchProblems
	out := make([]measure.GoalEventInput, 0, len(items))
	for i, it := range items {
		checkUserAndContext(&p, i, it.UserID, it.Context)
		if p.full() {
			break
		}
		if it.EventKey == nil {
			continue // skipped like an empty key (docs/reference/measurement.md, Goal events)
		}
		out = append(out, measure.GoalEventInput{EventKey: *it.EventKey, UserID: it.UserID, Value: it.Value, Context: objectOrNil(it.Context), OccurredAt: it.OccurredAt})
	}
	return out, p.err()
}

func checkUserAndContext(p *batchProblems, i int, user *string, ctx json.RawMessage) {
	if user != nil && utf8.RuneCountInString(*user) > 256 {
		p.add(i, "user_id", "must be at most 256 characters")
	}
	if c := bytes.TrimSpace(ctx); len(c) > 0 && c[0] != '{' && !bytes.Equal(c, []byte("null")) {
		p.add(i, "context", "must be an object or null")
	}
}

// decodeBatch decodes a JSON array; a body that is not an array is
// malformed (400), an item field of the wrong type breaks a rule (422).
//
// These bodies skip the document's schema pass, so this is the one place
// their top-level type is checked. encoding/json alone does not do it: it
// decodes null into a nil slice without an error, which would store an
// empty batch. Looking at the first byte keeps it to one parse.
func decodeBatch(body []byte, into any) error {
	if b := bytes.TrimLeft(body, " \t\r\n"); len(b) > 0 && b[0] != '[' {
		return apperr.E(apperr.BadRequest, "the body must be a JSON array")
	}
	err := json.Unmarshal(body, into)
	var typeErr *json.UnmarshalTypeError
	var timeErr *time.ParseError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return apperr.Field(typeErr.Field, "has the wrong type (got a JSON "+typeErr.Value+")")
	case errors.As(err, &typeErr):
		return apperr.E(apperr.BadRequest, "the body must be a JSON array")
	case errors.As(err, &timeErr):
		return apperr.Wrap(apperr.Invalid, "a time is not RFC 3339 (2026-11-22T09:00:00Z)", err)
	}
	return apperr.Wrap(apperr.BadRequest, "request body is not valid JSON", err)
}

func objectOrNil(c json.RawMessage) json.RawMessage {
	if c = bytes.TrimSpace(c); len(c) == 0 || bytes.Equal(c, []byte("null")) {
		return nil
	}
	return c
}

// batchProblems collects per-item failures, named items.N.field like the
// document validator names fields.
type batchProblems []apperr.Detail

func (p *batchProblems) add(i int, field, msg string) {
	if len(*p) < maxDetails {
		*p = append(*p, apperr.Detail{Field: fmt.Sprintf("%d.%s", i, field), Message: msg})
	}
}

func (p batchProblems) full() bool { return len(p) >= maxDetails }

func (p batchProblems) err() error {
	if len(p) == 0 {
		return nil
	}
	return &apperr.Error{Kind: apperr.Invalid, Message: p[0].Field + ": " + p[0].Message, Details: p}
}
