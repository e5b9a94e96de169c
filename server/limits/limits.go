// Package limits holds the limits (docs/reference/limits.md) that the control
// plane and measurement both enforce.
package limits

import "regexp"

// MaxKeyLen is the longest flag, segment, experiment or event key.
const MaxKeyLen = 100

// keyPattern is the key rule of flags, segments, experiments and goal events.
var keyPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,100}$`)

// ValidKey reports whether s follows the key rule.
func ValidKey(s string) bool { return keyPattern.MatchString(s) }
