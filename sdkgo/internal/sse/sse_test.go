package sse

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func readAll(s string) ([]Event, error) {
	r := NewReader(strings.NewReader(s))
	var out []Event
	for {
		ev, err := r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return out, err
		}
		out = append(out, ev)
	}
}

func TestReader(t *testing.T) {
	got, err := readAll("event: connected\ndata: {\"environment_id\":null}\n\n: keep-alive\n\nevent: update\ndata: a\ndata: b\n\n\nevent: ready\ndata: \"0\"\n\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []Event{
		{Name: "connected", Data: `{"environment_id":null}`},
		{Comment: true, Data: "keep-alive"},
		{Name: "update", Data: "a\nb"},
		{Name: "ready", Data: `"0"`},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	if _, err := readAll("bogus line\n\n"); !errors.Is(err, ErrMalformed) {
		t.Errorf("malformed line: %v, want ErrMalformed", err)
	}
}

// FuzzReader: never panics, never loops forever, and every event it returns
// came from the input.
func FuzzReader(f *testing.F) {
	f.Add("event: update\ndata: {}\n\n")
	f.Add(": c\n\ndata:x\n\n")
	f.Fuzz(func(t *testing.T, s string) {
		evs, _ := readAll(s)
		for _, ev := range evs {
			if ev.Name != "" && !strings.Contains(s, ev.Name) {
				t.Fatalf("event name %q not in the input", ev.Name)
			}
		}
	})
}
