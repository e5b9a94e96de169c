package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"time"

	"github.com/switchyard/switchyard/gen/apiserver"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/limits"
	"github.com/switchyard/switchyard/server/measure"
)

// IngestSummaries stores a batch of evaluation summaries. Batches over 500
// rows were already refused by limitBatch before the body was decoded.
func (h *Handlers) IngestSummaries(ctx context.Context, req apiserver.IngestSummariesRequestObject) (apiserver.IngestSummariesResponseObject, error) {
	if req.Body == nil {
		return nil, apperr.E(apperr.BadRequest, "request body is required")
	}
	items, err := decodeSummaries(*req.Body)
	if err != nil {
		return nil, err
	}
	if err := h.measure.IngestSummaries(ctx, auth.FromContext(ctx), req.EnvId, items); err != nil {
		return nil, err
	}
	return apiserver.IngestSummaries204Response{}, nil
}

// summaryRow is one summary as sent, each field still raw: a row that
// breaks a rule is skipped, not refused (docs/reference/measurement.md,
// Summaries).
type summaryRow struct {
	FlagKey json.RawMessage `json:"flag_key"`
	Value   json.RawMessage `json:"value"`
	Count   json.RawMessage `json:"count"`
	Start   json.RawMessage `json:"start"`
	End     json.RawMessage `json:"end"`
}

// integer is a JSON number without sign, fraction or exponent.
var integer = regexp.MustCompile(`^[0-9]+$`)

// decodeSummaries keeps the rows that follow every rule. Only a body that is
// not a JSON array is an error (400).
func decodeSummaries(body []byte) ([]measure.SummaryInput, error) {
	var rows []json.RawMessage
	if err := decodeBatch(body, &rows); err != nil {
		return nil, err
	}
	out := make([]measure.SummaryInput, 0, len(rows))
	for _, raw := range rows {
		if it, ok := summaryOf(raw); ok {
			out = append(out, it)
		}
	}
	return out, nil
}

func summaryOf(raw json.RawMessage) (measure.SummaryInput, bool) {
	var r summaryRow
	if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) || json.Unmarshal(raw, &r) != nil {
		return measure.SummaryInput{}, false
	}
	var it measure.SummaryInput
	flag, ok1 := jsonString(r.FlagKey)
	value, ok2 := jsonString(r.Value)
	start, ok3 := jsonTime(r.Start)
	end, ok4 := jsonTime(r.End)
	if !ok1 || !ok2 || !ok3 || !ok4 || !limits.ValidKey(flag) || start.After(end) || !integer.Match(r.Count) {
		return it, false
	}
	n, err := strconv.ParseInt(string(r.Count), 10, 64)
	if err != nil || n < 1 {
		return it, false
	}
	return measure.SummaryInput{FlagKey: flag, Value: value, Count: n, Start: start, End: end}, true
}

// jsonString decodes a JSON string; anything else (null included) is not one.
func jsonString(raw json.RawMessage) (string, bool) {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// jsonTime decodes an RFC 3339 time written as a JSON string.
func jsonTime(raw json.RawMessage) (time.Time, bool) {
	s, ok := jsonString(raw)
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}
