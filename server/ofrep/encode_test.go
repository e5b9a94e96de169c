package ofrep

import (
	"encoding/json"
	"testing"
)

// The hand encoder writes exactly what json.Marshal writes.
func TestAppendResultMatchesEncodingJSON(t *testing.T) {
	values := []any{nil, true, false, "on", "", "<b>&\"q\"\\", "é ü", "\u2028", "\x00\x7f", "\xff",
		json.RawMessage("12"), json.RawMessage("-7"), json.RawMessage("0"), json.RawMessage("1000000000000000000000"),
		json.RawMessage("007"), json.RawMessage("1.5"), 1.5, 1e21, 1e-7, -0.0,
		map[string]any{"b": []any{1.0, "x", nil, true}, "a": map[string]any{}}, []any{}}
	variants := []*string{nil, ptr(""), ptr("on"), ptr(`{"a":1}`), ptr("<&>")}
	for i, v := range values {
		res := result{Key: []string{"flag-1", "a.b_c", "ü<x>"}[i%3], Value: v, Reason: "SPLIT",
			Variant: variants[i%len(variants)], Metadata: metadata{Version: int64(i) * 1_000_003}}
		want, wantErr := json.Marshal(res)
		got, err := appendResult([]byte("prefix"), res)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("value %#v: error %v, encoding/json's %v", v, err, wantErr)
		}
		if err != nil {
			continue
		}
		if string(got) != "prefix"+string(want) {
			t.Errorf("value %#v:\n got %s\nwant %s", v, got[len("prefix"):], want)
		}
	}
	flags := []result{{Key: "a", Value: true, Reason: "DEFAULT", Variant: ptr("true")}, {Key: "b", Reason: "DISABLED"}}
	for _, fs := range [][]result{{}, flags} {
		streams := []eventStream{{Type: "sse", URL: "http://h:1/ofrep/v1/events?token=x&y=<z>"}}
		want, _ := json.Marshal(bulkResponse{Flags: fs, EventStreams: streams})
		got, err := appendBulk(nil, fs, streams)
		if err != nil || string(got) != string(want) {
			t.Errorf("bulk (%v):\n got %s\nwant %s", err, got, want)
		}
	}
}
