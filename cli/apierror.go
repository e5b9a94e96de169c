package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
)

// apiError is the server's refusal: its status, message and the fields it
// names.
type apiError struct {
	status  int
	message string
	details []struct{ Field, Message string }
}

func (e *apiError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%d %s)", e.message, e.status, http.StatusText(e.status))
	// The message names the first field; the list is for the others.
	if len(e.details) > 1 {
		for _, d := range e.details {
			fmt.Fprintf(&b, "\n  %s: %s", d.Field, d.Message)
		}
	}
	if e.status == http.StatusUnauthorized {
		b.WriteString("\n  give a personal access token with --token or SWITCHYARD_TOKEN")
	}
	return b.String()
}

// response is what every generated response has.
type response interface{ StatusCode() int }

// expect returns nil when the answer has the status of success, else the
// server's error read from body.
func expect(r response, body []byte, want int) error {
	if r.StatusCode() == want {
		return nil
	}
	var e struct {
		Error   string `json:"error"`
		Details []struct {
			Field   string `json:"field"`
			Message string `json:"message"`
		} `json:"details"`
	}
	out := &apiError{status: r.StatusCode()}
	if json.Unmarshal(body, &e) == nil && e.Error != "" {
		out.message = e.Error
		for _, d := range e.Details {
			out.details = append(out.details, struct{ Field, Message string }{d.Field, d.Message})
		}
	} else {
		out.message = "unexpected answer " + strings.TrimSpace(string(body))
	}
	return out
}

// answer is a request's outcome when only its success matters: the error
// sending it, or the server's refusal unless the answer has the status
// want. r is a generated response; its Body field holds the answer, read
// here by reflection because generated types carry no method for it.
func answer(r response, err error, want int) error {
	if err != nil {
		return err
	}
	body, _ := reflect.ValueOf(r).Elem().FieldByName("Body").Interface().([]byte)
	return expect(r, body, want)
}
