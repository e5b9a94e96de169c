package provider

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/switchyard/switchyard/gen/apiclient"
)

// client is what resources and data sources are configured with.
type client struct {
	api *apiclient.ClientWithResponses
	url string
}

// configured is the client of a resource's or data source's Configure, nil
// before the provider is configured (validation runs that early).
func configured(data any, diags *diag.Diagnostics) *client {
	if data == nil {
		return nil
	}
	c, ok := data.(*client)
	if !ok {
		diags.AddError("Unexpected provider data", fmt.Sprintf("want *client, got %T", data))
	}
	return c
}

// response is what every generated response has.
type response interface{ StatusCode() int }

// refusal is the server's answer when it was not the one of success.
type refusal struct {
	status  int
	message string
	details []detail
}

type detail struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

func (e *refusal) Error() string {
	return fmt.Sprintf("%s (%d %s)", e.message, e.status, http.StatusText(e.status))
}

// notFound reports a refusal with 404: the resource is gone.
func notFound(err error) bool {
	var r *refusal
	return errors.As(err, &r) && r.status == http.StatusNotFound
}

// check is a request's outcome: the error sending it, or the server's
// refusal unless the answer has one of the statuses want. r is a generated
// response; its Body field holds the answer (read by reflection: the
// generated types carry no method for it).
func check(r response, err error, want ...int) error {
	if err != nil {
		return err
	}
	for _, w := range want {
		if r.StatusCode() == w {
			return nil
		}
	}
	body, _ := reflect.ValueOf(r).Elem().FieldByName("Body").Interface().([]byte)
	var e struct {
		Error   string   `json:"error"`
		Details []detail `json:"details"`
	}
	out := &refusal{status: r.StatusCode()}
	if json.Unmarshal(body, &e) == nil && e.Error != "" {
		out.message, out.details = e.Error, e.Details
	} else {
		out.message = "unexpected answer " + strings.TrimSpace(string(body))
	}
	return out
}

// addError reports err: a refusal's fields on the attributes they name
// (rules.0.values.1 is rules[0].values[1]), under the operation summary.
func addError(diags *diag.Diagnostics, summary string, err error) {
	var r *refusal
	if !errors.As(err, &r) || len(r.details) == 0 {
		diags.AddError(summary, err.Error())
		return
	}
	for _, d := range r.details {
		diags.AddAttributeError(attributePath(d.Field), summary, fmt.Sprintf("%s: %s (%d)", d.Field, d.Message, r.status))
	}
}

// attributePath is the attribute of an API field path.
func attributePath(field string) path.Path {
	parts := strings.Split(field, ".")
	p := path.Root(parts[0])
	for _, part := range parts[1:] {
		if i, err := strconv.Atoi(part); err == nil {
			p = p.AtListIndex(i)
		} else {
			p = p.AtName(part)
		}
	}
	return p
}
