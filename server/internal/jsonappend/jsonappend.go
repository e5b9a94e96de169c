// Package jsonappend appends JSON values to a byte slice, byte for byte as
// encoding/json writes them, for the encoders that write many small objects
// by hand (OFREP answers, raw exports) without reflection.
package jsonappend

import "encoding/json"

// String appends s as a JSON string. Printable ASCII other than the
// characters encoding/json escapes ('"', '\\' and, for HTML, '<', '>', '&')
// is copied; anything else goes through encoding/json, which also handles
// invalid UTF-8 and U+2028/U+2029.
func String(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			enc, _ := json.Marshal(s) // a string always encodes
			return append(b, enc...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
