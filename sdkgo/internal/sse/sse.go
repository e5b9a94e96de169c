// Package sse reads a Server-Sent Events stream: the subset the Switchyard
// stream uses (event, data, comments), strictly, so that a malformed stream
// is an error and the client reconnects instead of guessing.
package sse

import (
	"bufio"
	"errors"
	"io"
	"strings"
)

// maxLine bounds one line; a flag update is far smaller.
const maxLine = 4 << 20

// Event is one dispatched event. Comment events (keep-alives) have Name
// "" and Comment true.
type Event struct {
	Name    string
	Data    string
	Comment bool
}

// Reader reads events from a stream.
type Reader struct {
	sc *bufio.Scanner
}

// NewReader reads events from r.
func NewReader(r io.Reader) *Reader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	return &Reader{sc: sc}
}

// ErrMalformed reports a line that is not part of the event-stream format.
var ErrMalformed = errors.New("malformed event stream")

// Next returns the next event or comment; io.EOF when the stream ends.
func (r *Reader) Next() (Event, error) {
	var ev Event
	var data []string
	for r.sc.Scan() {
		line := r.sc.Text()
		switch {
		case line == "":
			if ev.Name == "" && data == nil {
				continue // stray blank line
			}
			ev.Data = strings.Join(data, "\n")
			return ev, nil
		case strings.HasPrefix(line, ":"):
			if ev.Name == "" && data == nil {
				return Event{Comment: true, Data: strings.TrimSpace(line[1:])}, nil
			}
		default:
			field, value, found := strings.Cut(line, ":")
			if !found {
				return Event{}, ErrMalformed
			}
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "event":
				ev.Name = value
			case "data":
				data = append(data, value)
			case "id", "retry":
				// not used by Switchyard; allowed by the format
			default:
				return Event{}, ErrMalformed
			}
		}
	}
	if err := r.sc.Err(); err != nil {
		return Event{}, err
	}
	return Event{}, io.EOF
}
