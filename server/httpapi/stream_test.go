package httpapi

import "testing"

func TestAcceptsGzip(t *testing.T) {
	cases := []struct {
		name   string
		header []string
		want   bool
	}{
		{"absent", nil, false},
		{"empty", []string{""}, false},
		{"gzip", []string{"gzip"}, true},
		{"list", []string{"deflate, gzip, br"}, true},
		{"case and spaces", []string{"  GZip ;Q=0.5 "}, true},
		{"x-gzip", []string{"x-gzip"}, true},
		{"q=0 refuses", []string{"gzip;q=0"}, false},
		{"q=0.000 refuses", []string{"gzip; q=0.000"}, false},
		{"identity only", []string{"identity"}, false},
		{"br only", []string{"br"}, false},
		{"star", []string{"*"}, true},
		{"star q=0", []string{"*;q=0"}, false},
		{"named beats star", []string{"gzip;q=0, *;q=1"}, false},
		{"named beats star the other way", []string{"*;q=0, gzip"}, true},
		{"several header lines", []string{"br", "gzip;q=0.8"}, true},
		{"malformed weight", []string{"gzip;q=abc"}, false},
		{"weight above 1", []string{"gzip;q=2"}, false},
		{"gzip named twice", []string{"gzip;q=0, gzip;q=1"}, true},
		{"other parameter", []string{"gzip;level=9"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := acceptsGzip(c.header); got != c.want {
				t.Errorf("acceptsGzip(%q) = %v, want %v", c.header, got, c.want)
			}
		})
	}
}
