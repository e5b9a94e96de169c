package scim

import (
	"strings"
)

// Filter is the one filter form SCIM clients send to find a resource:
// `attr eq "value"` (RFC 7644, section 3.4.2.2). Attr keeps the letter case
// it was sent in; attribute names compare case-insensitively.
type Filter struct {
	Attr  string
	Value string
}

// ParseFilter parses `attr eq "value"`: an attribute path (letters, digits,
// dots, colons and the schema URN's other characters), the operator eq in any
// case, and a JSON string. Anything else is an invalidFilter error; an empty
// filter is the zero Filter.
func ParseFilter(s string) (Filter, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Filter{}, nil
	}
	attr, rest, ok := strings.Cut(s, " ")
	if !ok || attr == "" || !validAttrPath(attr) {
		return Filter{}, errInvalidFilter(s)
	}
	rest = strings.TrimLeft(rest, " ")
	op, rest, ok := strings.Cut(rest, " ")
	if !ok || !strings.EqualFold(op, "eq") {
		return Filter{}, errInvalidFilter(s)
	}
	value, ok := unquote(strings.TrimSpace(rest))
	if !ok {
		return Filter{}, errInvalidFilter(s)
	}
	return Filter{Attr: attr, Value: value}, nil
}

// unquote reads one JSON string literal that makes up the whole of s.
func unquote(s string) (string, bool) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return "", false
	}
	var b strings.Builder
	for i := 1; i < len(s)-1; i++ {
		c := s[i]
		switch {
		case c == '\\':
			i++
			if i >= len(s)-1 {
				return "", false
			}
			switch s[i] {
			case '"', '\\', '/':
				b.WriteByte(s[i])
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				return "", false
			}
		case c == '"':
			return "", false // the literal ended before the filter did
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

func validAttrPath(s string) bool {
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case r == '.', r == ':', r == '-', r == '_', r == '$':
		default:
			return false
		}
	}
	return true
}

// ValuePath is a PATCH path naming elements of a multi-valued attribute by a
// filter, as in `members[value eq "12"]` or `emails[type eq "work"].value`.
type ValuePath struct {
	Attr   string // members, emails
	Filter Filter // value eq "12"
	Sub    string // the sub-attribute after the brackets, if any: value
}

// ParseValuePath splits a path with brackets; ok is false for a path
// without them, and err is set when the brackets hold something other than
// one `attr eq "value"`.
func ParseValuePath(path string) (vp ValuePath, ok bool, err error) {
	open := strings.IndexByte(path, '[')
	if open < 0 {
		return ValuePath{}, false, nil
	}
	end := strings.LastIndexByte(path, ']')
	if end < open || open == 0 {
		return ValuePath{}, true, errInvalidPath(path)
	}
	f, err := ParseFilter(path[open+1 : end])
	if err != nil || f.Attr == "" {
		return ValuePath{}, true, errInvalidPath(path)
	}
	sub := path[end+1:]
	if sub != "" {
		if sub[0] != '.' || !validAttrPath(sub[1:]) {
			return ValuePath{}, true, errInvalidPath(path)
		}
		sub = sub[1:]
	}
	return ValuePath{Attr: path[:open], Filter: f, Sub: sub}, true, nil
}
