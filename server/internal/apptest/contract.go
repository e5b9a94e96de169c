package apptest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/switchyard/switchyard/api"
)

// contract checks real responses against api/openapi.yaml: every response a
// test receives through Do must have a status the operation documents and a
// body that matches its schema.
type contract struct {
	router routers.Router
}

var loadContract = sync.OnceValues(func() (*contract, error) {
	doc, err := openapi3.NewLoader().LoadFromData(api.OpenAPI)
	if err != nil {
		return nil, err
	}
	doc.Servers = nil
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, err
	}
	return &contract{router: router}, nil
})

// checkResponse fails the test when resp (whose body is raw) breaks the
// document.
func checkResponse(t testing.TB, req *http.Request, resp *http.Response, raw []byte) {
	t.Helper()
	c, err := loadContract()
	if err != nil {
		t.Fatalf("load openapi document: %v", err)
	}
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		return // not an operation of the document (the router's own 404/405)
	}
	opts := &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}
	if isNDJSON(resp) {
		checkNDJSON(t, req, route, resp, raw)
		opts.ExcludeResponseBody = true
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 resp.StatusCode,
		Header:                 resp.Header,
		Body:                   io.NopCloser(bytes.NewReader(raw)),
		Options:                opts,
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		t.Errorf("%s %s answered %d, which breaks api/openapi.yaml: %v\nbody: %s", req.Method, req.URL.Path, resp.StatusCode, err, raw)
	}
}
