// Package limits holds the limits (docs/reference/limits.md) that the control
// plane and measurement both enforce.
package limits

import "github.com/switchyard/switchyard/sdkgo/eval/check"

// MaxKeyLen is the longest flag, segment, experiment or event key.
const MaxKeyLen = 100

// ValidKey reports whether s follows the key rule of flags, segments,
// experiments and goal events (check.Key, which the command line applies
// to files too).
func ValidKey(s string) bool { return check.Key(s) }
