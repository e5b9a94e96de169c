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
		{`W/"a"`, `W/"a"`, true},
		{`, ,"a"`, `"a"`, true},
		{`,,`, `"a"`, false},
	} {
		if got := Matches(c.header, c.tag); got != c.want {
			t.Errorf("Matches(%q, %q) = %v, want %v", c.header, c.tag, got, c.want)
		}
	}
}

func TestMatchesAllocatesNothing(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { Matches(`"x", W/"a"`, `"a"`) }); n != 0 {
		t.Errorf("Matches allocates %v times", n)
	}
}
