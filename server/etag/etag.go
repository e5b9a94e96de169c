// Package etag answers conditional requests for the routes that serve
// entity tags (the snapshot, OFREP's bulk evaluation).
package etag

import "strings"

// Matches applies If-None-Match (RFC 9110 §13.1.2, weak comparison): "*" or
// any listed tag, weak or not, matches tag. An empty header matches nothing.
func Matches(ifNoneMatch, tag string) bool {
	if ifNoneMatch == "" {
		return false
	}
	for _, t := range strings.Split(ifNoneMatch, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || t == tag || t == "W/"+tag || "W/"+t == tag {
			return true
		}
	}
	return false
}
