package ofrep

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// scanContext reads the request bodies providers actually send, without
// reflection: {"context": {...}} whose keys and string values need no
// unescaping and whose context values are scalars (what OpenFeature
// providers send), in one pass and with one map allocation. It reports
// false for anything else, valid or not: nested values, escapes, other
// spellings of "context", a repeated "context", a number float64 cannot
// hold, any syntax error. parseContext then decodes the body with
// encoding/json, which decides every such case (and words the 400), so the
// fast path can only ever agree with it; FuzzScanContext checks that it does.
//
// raw is already trimmed by parseContext, exactly as before json.Unmarshal.
func scanContext(raw []byte) (evalContext, bool) {
	s := scanner{b: raw}
	if !s.byte('{') {
		return evalContext{}, false
	}
	var c evalContext
	seen := false
	if s.peek() == '}' {
		s.i++
		return c, s.end()
	}
	for {
		key, ok := s.plainString()
		if !ok || !s.byte(':') {
			return evalContext{}, false
		}
		if !ascii(key) {
			return evalContext{}, false // Unicode case folding: encoding/json's call
		}
		if strings.EqualFold(key, "context") {
			// encoding/json matches the field case-insensitively and merges a
			// repeated object into the first: leave those to it.
			if key != "context" || seen {
				return evalContext{}, false
			}
			seen = true
			if c, ok = s.contextValue(); !ok {
				return evalContext{}, false
			}
		} else if !s.skipScalar() {
			return evalContext{}, false
		}
		switch s.next() {
		case ',':
			continue
		case '}':
			return c, s.end()
		}
		return evalContext{}, false
	}
}

// contextValue reads the context: an object of scalars. The result is what
// parseContext's reflection path gives: the last targetingKey decides the
// user, the last value of each key decides its attribute, and non-scalar
// values are dropped. Anything else, null included, is declined: it is an
// invalid context, which decodeContext words.
func (s *scanner) contextValue() (evalContext, bool) {
	if !s.byte('{') {
		return evalContext{}, false
	}
	c := evalContext{attrs: make(map[string]any, 4)}
	if s.peek() == '}' {
		s.i++
		return c, true
	}
	for {
		key, ok := s.plainString()
		if !ok || !s.byte(':') {
			return evalContext{}, false
		}
		v, ok := s.scalar()
		if !ok {
			return evalContext{}, false
		}
		if key == "targetingKey" {
			c.user, _ = v.(string)
		} else if v == nil {
			delete(c.attrs, key) // null is not an attribute
		} else {
			c.attrs[key] = v
		}
		switch s.next() {
		case ',':
			continue
		case '}':
			return c, true
		}
		return evalContext{}, false
	}
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// scanner walks a JSON text; every method skips the whitespace before what
// it reads.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next byte after whitespace, or 0 at the end.
func (s *scanner) peek() byte {
	s.space()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// next consumes and returns the next byte after whitespace, or 0 at the end.
func (s *scanner) next() byte {
	c := s.peek()
	if c != 0 {
		s.i++
	}
	return c
}

func (s *scanner) byte(c byte) bool {
	if s.peek() != c {
		return false
	}
	s.i++
	return true
}

// end reports whether only whitespace is left.
func (s *scanner) end() bool {
	s.space()
	return s.i == len(s.b)
}

func (s *scanner) literal(lit string) bool {
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		return false
	}
	s.i += len(lit)
	return true
}

// plainString reads a string without escapes, control characters or
// invalid UTF-8: one whose JSON text is its value.
func (s *scanner) plainString() (string, bool) {
	if !s.byte('"') {
		return "", false
	}
	start := s.i
	ascii := true
	for ; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; {
		case c == '"':
			v := s.b[start:s.i]
			s.i++
			if !ascii && !utf8.Valid(v) {
				return "", false // encoding/json would substitute U+FFFD
			}
			return string(v), true
		case c == '\\' || c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return "", false
}

// scalar reads a string, number, boolean or null (nil).
func (s *scanner) scalar() (any, bool) {
	switch s.peek() {
	case '"':
		return s.plainString()
	case 't':
		return true, s.literal("true")
	case 'f':
		return false, s.literal("false")
	case 'n':
		return nil, s.literal("null")
	}
	return s.number()
}

// skipScalar reads and discards a scalar.
func (s *scanner) skipScalar() bool {
	_, ok := s.scalar()
	return ok
}

// number reads a JSON number as float64, as encoding/json decodes numbers
// into an any.
func (s *scanner) number() (any, bool) {
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case s.i < len(s.b) && s.b[s.i] >= '1' && s.b[s.i] <= '9':
		s.digits()
	default:
		return nil, false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if !s.digits() {
			return nil, false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if !s.digits() {
			return nil, false
		}
	}
	f, err := strconv.ParseFloat(string(s.b[start:s.i]), 64)
	if err != nil {
		return nil, false // out of range: encoding/json's error
	}
	return f, true
}

// digits reads one or more decimal digits.
func (s *scanner) digits() bool {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}
