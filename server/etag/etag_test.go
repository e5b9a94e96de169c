package etag

import "testing"

func TestMatches(t *testing.T) {
	for _, c := range []struct {
		header, tag string
		want        bool
	}{
		{"", `"a"`, false},
		{`"a"`, `"a"`, true},
		{`"b"`, `"a"`, false},
		{`W/"a"`, `"a"`, true},
		{`"a"`, `W/"a"`, true},
		{`"x", "a"`, `"a"`, true},
		{` "x" ,W/"a" `, `"a"`, true},
		{"*", `"a"`, true},
		{`"ab"`, `"a"`, false},
	} {
		if got := Matches(c.header, c.tag); got != c.want {
			t.Errorf("Matches(%q, %q) = %v, want %v", c.header, c.tag, got, c.want)
		}
	}
}
