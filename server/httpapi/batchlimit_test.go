package httpapi

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCountItems(t *testing.T) {
	cases := []struct {
		body string
		stop int
		want int
	}{
		{`[]`, 501, 0},
		{` [ {"a":"x,y]}"}, {"b":[1,2,{"c":"\"]"}]}, 3, "s", null, true ] `, 501, 6},
		{`[1,2,3,4]`, 3, 3},     // stops at stop
		{`{"a":[1,2]}`, 501, 0}, // not an array
		{`["\\", "\\\"", 7]`, 501, 3},
	}
	for _, c := range cases {
		got, err := countItems(strings.NewReader(c.body), c.stop)
		if err != nil || got != c.want {
			t.Errorf("countItems(%s, %d) = %d, %v; want %d", c.body, c.stop, got, err, c.want)
		}
	}
}

// FuzzCountItems: for every valid JSON array the count equals the decoded
// length (up to stop); nothing panics on any input.
func FuzzCountItems(f *testing.F) {
	f.Add(`[{"flag_key":"a","value":"t"},{"flag_key":"b\"]","value":"f"}]`)
	f.Add(`[[],[[]],{},"",0]`)
	f.Fuzz(func(t *testing.T, body string) {
		got, _ := countItems(strings.NewReader(body), 1000)
		var items []json.RawMessage
		if json.Unmarshal([]byte(body), &items) == nil && got != min(len(items), 1000) {
			t.Fatalf("countItems(%q) = %d, decoded %d items", body, got, len(items))
		}
	})
}
