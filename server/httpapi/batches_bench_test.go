package httpapi

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// BenchmarkDecodeImpressions is the server's share of a 500-impression
// batch before the COPY: decoding and checking every item.
func BenchmarkDecodeImpressions(b *testing.B) {
	items := make([]map[string]any, 500)
	at := time.Date(2026, 11, 24, 12, 0, 0, 123456000, time.UTC)
	for i := range items {
		items[i] = map[string]any{"flag_key": fmt.Sprintf("flag-%02d", i%20), "user_id": fmt.Sprintf("user-%d", i*7919%250000),
			"value": "true", "evaluated_at": at.Format(time.RFC3339Nano)}
	}
	body, err := json.Marshal(items)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeImpressions(body); err != nil {
			b.Fatal(err)
		}
	}
}
