package eval

// maxSafeInteger is 2^53−1. docs/reference/evaluation.md, Versions: a numeric major, minor or patch above it makes
// the text no valid version (the largest integer every JSON-minded SDK holds exactly).
const maxSafeInteger = 1<<53 - 1

// version is a parsed Semantic Versioning 2.0.0 version. pre is the pre-release part without
// its "-" ("" for a release), a substring of the parsed text, so that parsing an attribute
// allocates nothing. Build metadata is checked but not kept: precedence ignores it.
type version struct {
	major, minor, patch uint64
	pre                 string
}

// parseVersion reads s as a SemVer 2.0.0 version with at most one leading lowercase "v"
// (docs/reference/evaluation.md, Versions). Nothing is trimmed: whitespace, "V", "=" and partial versions ("1.2")
// make s no version, and so does a numeric major, minor or patch above 2^53−1.
func parseVersion(s string) (version, bool) {
	var v version
	if len(s) > 0 && s[0] == 'v' {
		s = s[1:]
	}
	var ok bool
	if v.major, s, ok = versionCore(s); !ok || len(s) == 0 || s[0] != '.' {
		return v, false
	}
	if v.minor, s, ok = versionCore(s[1:]); !ok || len(s) == 0 || s[0] != '.' {
		return v, false
	}
	if v.patch, s, ok = versionCore(s[1:]); !ok {
		return v, false
	}
	if len(s) > 0 && s[0] == '-' {
		end := len(s)
		for i := 1; i < len(s); i++ {
			if s[i] == '+' {
				end = i
				break
			}
		}
		v.pre = s[1:end]
		if !identifiers(v.pre, true) {
			return v, false
		}
		s = s[end:]
	}
	if len(s) > 0 && s[0] == '+' {
		if !identifiers(s[1:], false) {
			return v, false
		}
		s = ""
	}
	return v, len(s) == 0
}

// versionCore reads a numeric identifier of the version core: "0" or a digit string without
// a leading zero, at most 2^53−1. It returns the number and the rest of s.
func versionCore(s string) (uint64, string, bool) {
	i := 0
	var n uint64
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		n = n*10 + uint64(s[i]-'0')
		i++
		if n > maxSafeInteger {
			return 0, s, false
		}
	}
	if i == 0 || (i > 1 && s[0] == '0') {
		return 0, s, false
	}
	return n, s[i:], true
}

// identifiers checks dot-separated SemVer identifiers: non-empty, of [0-9A-Za-z-]; in a
// pre-release (numericNoZero) a numeric identifier has no leading zero.
func identifiers(s string, numericNoZero bool) bool {
	start := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] != '.' {
			c := s[i]
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '-') {
				return false
			}
			continue
		}
		id := s[start:i]
		if len(id) == 0 {
			return false
		}
		if numericNoZero && len(id) > 1 && id[0] == '0' && isDigits(id) {
			return false
		}
		start = i + 1
	}
	return true
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return len(s) > 0
}

// compareVersions orders a and b by SemVer 2.0.0 precedence: -1, 0 or 1.
func compareVersions(a, b version) int {
	switch {
	case a.major != b.major:
		return cmpUint(a.major, b.major)
	case a.minor != b.minor:
		return cmpUint(a.minor, b.minor)
	case a.patch != b.patch:
		return cmpUint(a.patch, b.patch)
	}
	// A pre-release sorts before its release.
	switch {
	case a.pre == b.pre:
		return 0
	case a.pre == "":
		return 1
	case b.pre == "":
		return -1
	}
	x, y := a.pre, b.pre
	for {
		var ix, iy string
		ix, x = nextIdentifier(x)
		iy, y = nextIdentifier(y)
		if c := compareIdentifiers(ix, iy); c != 0 {
			return c
		}
		// A larger set of identifiers sorts after a smaller one whose identifiers are equal.
		switch {
		case len(x) == 0 && len(y) == 0:
			return 0
		case len(x) == 0:
			return -1
		case len(y) == 0:
			return 1
		}
	}
}

// nextIdentifier splits the first dot-separated identifier off s.
func nextIdentifier(s string) (string, string) {
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			return s[:i], s[i+1:]
		}
	}
	return s, ""
}

// compareIdentifiers compares two pre-release identifiers: numeric ones numerically, at any
// length (they have no leading zeros, so the longer is the larger); numeric ones before
// alphanumeric ones; alphanumeric ones in ASCII order.
func compareIdentifiers(a, b string) int {
	an, bn := isDigits(a), isDigits(b)
	switch {
	case an && bn:
		if len(a) != len(b) {
			return cmpInt(len(a), len(b))
		}
	case an:
		return -1
	case bn:
		return 1
	}
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpUint(a, b uint64) int {
	if a < b {
		return -1
	}
	return 1
}

func cmpInt(a, b int) int {
	if a < b {
		return -1
	}
	return 1
}
