package ofrep

import (
	"encoding/json"
	"strconv"

	"github.com/switchyard/switchyard/server/internal/jsonappend"
)

// The answers are encoded by appending, not through encoding/json's
// reflection: a single evaluation's answer costs less than its request's
// header parsing this way, and a bulk answer is 200 of them. Anything that
// is not plain (a JSON flag's value, a string needing escapes) is handed to
// encoding/json, so the bytes are always exactly json.Marshal's; the tests
// compare the two.

// appendResult appends res as json.Marshal encodes it.
func appendResult(b []byte, res result) ([]byte, error) {
	b = append(b, `{"key":`...)
	b = jsonappend.String(b, res.Key)
	if res.Value != nil {
		b = append(b, `,"value":`...)
		var err error
		if b, err = appendValue(b, res.Value); err != nil {
			return nil, err
		}
	}
	b = append(b, `,"reason":`...)
	b = jsonappend.String(b, res.Reason)
	if res.Variant != nil {
		b = append(b, `,"variant":`...)
		b = jsonappend.String(b, *res.Variant)
	}
	b = append(b, `,"metadata":{"version":`...)
	b = strconv.AppendInt(b, res.Metadata.Version, 10)
	return append(b, "}}"...), nil
}

// appendBulk appends a bulk answer as json.Marshal encodes it.
func appendBulk(b []byte, flags []result, streams []eventStream) ([]byte, error) {
	b = append(b, `{"flags":[`...)
	for i, r := range flags {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendResult(b, r); err != nil {
			return nil, err
		}
	}
	b = append(b, `],"eventStreams":[`...)
	for i, s := range streams {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":`...)
		b = jsonappend.String(b, s.Type)
		b = append(b, `,"url":`...)
		b = jsonappend.String(b, s.URL)
		b = append(b, '}')
	}
	return append(b, "]}"...), nil
}

// appendValue appends a flag value: booleans, plain strings and the
// integers evaluate renders directly, the rest through encoding/json.
func appendValue(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case bool:
		return strconv.AppendBool(b, v), nil
	case string:
		return jsonappend.String(b, v), nil
	case json.RawMessage:
		if plainInteger(v) {
			return append(b, v...), nil
		}
	}
	enc, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, enc...), nil
}

// plainInteger reports whether raw is an optional minus and digits, which
// encoding/json would copy as it is.
func plainInteger(raw []byte) bool {
	digits := raw
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 1 && digits[0] == '0' {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
