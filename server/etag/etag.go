// Package etag answers conditional requests for the routes that serve
// entity tags (the snapshot, OFREP's bulk evaluation).
package etag

import "strings"

// Matches applies If-None-Match (RFC 9110 §13.1.2, weak comparison): "*" or
// any listed tag, weak or not, matches tag. An empty header matches nothing.
func Matches(ifNoneMatch, tag string) bool {
	// Weak comparison (RFC 9110, 13.1.2); no allocation, since pollers send
	// this header on every request.
	opaque := strings.TrimPrefix(tag, "W/")
	for rest := ifNoneMatch; rest != ""; {
		var t string
		t, rest, _ = strings.Cut(rest, ",")
		t = strings.TrimSpace(t)
		if t == "*" || (t != "" && strings.TrimPrefix(t, "W/") == opaque) {
			return true
		}
	}
	return false
}
