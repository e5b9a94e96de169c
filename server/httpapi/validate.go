package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/mail"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/google/uuid"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/gen/apiserver"
	"github.com/switchyard/switchyard/server/apperr"
)

// loadSpec parses the embedded OpenAPI document for validation, with its
// servers cleared so that routes match on any host.
func loadSpec() (*openapi3.T, error) {
	spec, err := openapi3.NewLoader().LoadFromData(api.OpenAPI)
	if err != nil {
		return nil, fmt.Errorf("load embedded openapi document: %w", err)
	}
	spec.Servers = nil
	return spec, nil
}

// formatValidators are the string formats of api/openapi.yaml that kin-openapi
// does not check by default. date and date-time it checks itself.
func formatValidators() map[string]openapi3.StringFormatValidator {
	return map[string]openapi3.StringFormatValidator{
		"uuid": openapi3.NewCallbackValidator(func(s string) error {
			if _, err := uuid.Parse(s); err != nil || len(s) != 36 {
				return errors.New("not a UUID")
			}
			return nil
		}),
		"email": openapi3.NewCallbackValidator(func(s string) error {
			a, err := mail.ParseAddress(s)
			if err != nil || a.Address != s {
				return errors.New("not an email address")
			}
			return nil
		}),
	}
}

// validator checks every request that matches a route of the document
// against it before a handler runs. Requests that match no route pass
// through, so the router answers 404 or 405 in the usual shape.
type validator struct {
	router       routers.Router
	options      *openapi3filter.Options
	batchOptions *openapi3filter.Options // the same without the body (ingest batches)
	errs         errorWriter
}

func newValidator(spec *openapi3.T, errs errorWriter) (*validator, error) {
	router, err := gorillamux.NewRouter(spec)
	if err != nil {
		return nil, fmt.Errorf("build validation router: %w", err)
	}
	v := &validator{
		router: router,
		options: &openapi3filter.Options{
			MultiError: true,
			// Authentication is the auth middleware's job; the document's
			// security schemes only describe it.
			AuthenticationFunc:      openapi3filter.NoopAuthenticationFunc,
			SchemaValidationOptions: []openapi3.SchemaValidationOption{openapi3.WithStringFormatValidators(formatValidators())},
			// Defaults are applied by the services, not injected into the body.
			SkipSettingDefaults: true,
		},
		errs: errs,
	}
	batch := *v.options
	batch.ExcludeRequestBody = true
	v.batchOptions = &batch
	return v, nil
}

// matchedRoute is the document's operation a request matched, found once
// and shared by authentication (is it public?) and validation.
type matchedRoute struct {
	route  *routers.Route
	params map[string]string
}

type routeKey struct{}

func routeFrom(r *http.Request) *matchedRoute {
	m, _ := r.Context().Value(routeKey{}).(*matchedRoute)
	return m
}

// findRoute matches the request against the document. Requests that match
// no operation carry none and reach the router, which answers 404 or 405.
func (v *validator) findRoute(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		route, params, err := v.router.FindRoute(r)
		if err == nil {
			r = r.WithContext(context.WithValue(r.Context(), routeKey{}, &matchedRoute{route: route, params: params}))
			if l, ok := r.Context().Value(routeLabelKey{}).(*routeLabel); ok {
				l.name = route.Path
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (v *validator) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := routeFrom(r)
		if m == nil {
			next.ServeHTTP(w, r)
			return
		}
		opts := v.options
		if batchOperations[m.route.Operation.OperationID] {
			opts = v.batchOptions // items are checked once, in batches.go
		}
		in := &openapi3filter.RequestValidationInput{Request: r, PathParams: m.params, Route: m.route, Options: opts}
		if err := openapi3filter.ValidateRequest(r.Context(), in); err != nil {
			v.errs.write(w, r, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// classify turns any error that reaches the error writer into an
// *apperr.Error: our own errors pass through; validator, parameter-binding
// and body-decoding errors become 400, 404, 413 or 422 as the API document's
// conventions say.
func classify(err error) *apperr.Error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return apperr.Ef(apperr.TooLarge, "request body is larger than %d bytes", mbe.Limit)
	}
	if e := apperr.As(err); e != nil {
		return e
	}
	// kin-openapi nests its errors (a MultiError of RequestErrors wrapping
	// MultiErrors of SchemaErrors), so match the error itself, outermost
	// first, rather than searching the chain.
	switch e := err.(type) {
	case openapi3.MultiError:
		return fromMulti(e)
	case *openapi3filter.RequestError:
		return fromRequestError(e)
	case *openapi3.SchemaError:
		return fromSchemaError(e)
	}
	var invalidParam *apiserver.InvalidParamFormatError
	if errors.As(err, &invalidParam) {
		return paramError(invalidParam.ParamName, "path", "has an invalid format")
	}
	var unmarshalParam *apiserver.UnmarshalingParamError
	if errors.As(err, &unmarshalParam) {
		return paramError(unmarshalParam.ParamName, "query", "has an invalid format")
	}
	var requiredParam *apiserver.RequiredParamError
	if errors.As(err, &requiredParam) {
		return paramError(requiredParam.ParamName, "query", "is required")
	}
	var tooMany *apiserver.TooManyValuesForParamError
	if errors.As(err, &tooMany) {
		return paramError(tooMany.ParamName, "query", "is given more than once")
	}
	var syntax *jsonSyntaxError
	if errors.As(err, &syntax) {
		return apperr.Wrap(apperr.BadRequest, "request body is not valid JSON", err)
	}
	// A database data exception (SQLSTATE class 22: bad text, a number out
	// of range) can only come from a value the client sent; it is never
	// answered as our fault. Matched by method so that this package need not
	// know the driver.
	var pg interface{ SQLState() string }
	if errors.As(err, &pg) && strings.HasPrefix(pg.SQLState(), "22") {
		return apperr.Wrap(apperr.Invalid, "a value in the request cannot be stored (bad text or a number out of range)", err)
	}
	return apperr.Wrap(apperr.Internal, "", err)
}

// jsonSyntaxError marks a body that could not be decoded by the strict
// handlers (the validator normally catches it first).
type jsonSyntaxError struct{ err error }

func (e *jsonSyntaxError) Error() string { return e.err.Error() }
func (e *jsonSyntaxError) Unwrap() error { return e.err }

// fromMulti merges several validation failures into one error: the worst
// kind wins (a malformed body beats a rule), details accumulate.
func fromMulti(multi openapi3.MultiError) *apperr.Error {
	out := &apperr.Error{Kind: apperr.Invalid, Err: multi}
	var msgs []string
	for _, one := range multi {
		e := classify(one)
		if rank(e.Kind) > rank(out.Kind) {
			out.Kind = e.Kind
		}
		out.Details = append(out.Details, e.Details...)
		if e.Message != "" {
			msgs = append(msgs, e.Message)
		}
	}
	out.Message = strings.Join(dedupe(msgs), "; ")
	if out.Message == "" {
		out.Message = "invalid request"
	}
	return out
}

// rank orders the kinds a validation failure can have: the one a client must
// fix first is reported.
func rank(k apperr.Kind) int {
	switch k {
	case apperr.TooLarge:
		return 4
	case apperr.BadRequest:
		return 3
	case apperr.NotFound:
		return 2
	case apperr.Invalid:
		return 1
	default:
		return 0
	}
}

func fromRequestError(re *openapi3filter.RequestError) *apperr.Error {
	if re.Parameter != nil {
		reason := re.Reason
		if se := firstSchemaError(re.Err); se != nil {
			reason = se.Reason
		} else if reason == "" && re.Err != nil {
			reason = re.Err.Error()
		}
		return paramError(re.Parameter.Name, re.Parameter.In, reason)
	}
	if re.RequestBody != nil || strings.Contains(re.Reason, "body") {
		return fromBodyError(re)
	}
	return apperr.Wrap(apperr.BadRequest, "invalid request: "+re.Reason, re)
}

// paramError reports a bad parameter. A malformed path identifier names a
// resource that cannot exist, so it answers 404 like any unknown resource;
// a bad query or header value is a rule broken by the caller (422).
func paramError(name, in, reason string) *apperr.Error {
	if in == "path" {
		return apperr.Ef(apperr.NotFound, "not found: %s %s", name, reason)
	}
	return &apperr.Error{
		Kind:    apperr.Invalid,
		Message: fmt.Sprintf("%s parameter %q: %s", in, name, reason),
		Details: []apperr.Detail{{Field: name, Message: reason}},
	}
}

func fromBodyError(re *openapi3filter.RequestError) *apperr.Error {
	var pe *openapi3filter.ParseError
	if errors.As(re.Err, &pe) {
		return apperr.Wrap(apperr.BadRequest, "request body is not valid JSON", re)
	}
	switch e := re.Err.(type) {
	case openapi3.MultiError:
		return fromMulti(e)
	case *openapi3.SchemaError:
		return fromSchemaError(e)
	}
	if errors.Is(re.Err, openapi3filter.ErrInvalidRequired) || strings.Contains(re.Reason, "required") {
		return apperr.Wrap(apperr.BadRequest, "request body is required", re)
	}
	if strings.Contains(re.Reason, "Content-Type") || strings.Contains(re.Reason, "content type") {
		return apperr.Wrap(apperr.BadRequest, "unsupported Content-Type: send application/json", re)
	}
	return apperr.Wrap(apperr.BadRequest, "invalid request body", re)
}

// fromSchemaError reports one schema violation of the body. A body whose
// top level has the wrong JSON type is malformed (400); anything deeper is a
// broken rule on a named field (422).
func fromSchemaError(se *openapi3.SchemaError) *apperr.Error {
	path := se.JSONPointer()
	field := strings.Join(path, ".")
	reason := se.Reason
	if se.SchemaField == "required" {
		if name, ok := missingProperty(reason); ok {
			// kin-openapi's pointer usually ends with the missing property
			// already; make sure it does.
			if len(path) == 0 || path[len(path)-1] != name {
				if field != "" {
					field += "."
				}
				field += name
			}
			reason = "is required"
		}
	}
	if field == "" {
		switch se.SchemaField {
		case "type":
			return apperr.Wrap(apperr.BadRequest, "request body has the wrong JSON type: "+reason, se)
		case "nullable":
			// kin-openapi reports null against a schema that does not allow
			// it as a nullable violation, not a type mismatch; for the body
			// as a whole it is the same mistake.
			return apperr.Wrap(apperr.BadRequest, "request body has the wrong JSON type: null", se)
		}
		field = "body"
	}
	return &apperr.Error{
		Kind:    apperr.Invalid,
		Message: field + ": " + reason,
		Details: []apperr.Detail{{Field: field, Message: reason}},
		Err:     se,
	}
}

// missingProperty extracts the name from kin-openapi's reason
// `property "x" is missing`.
func missingProperty(reason string) (string, bool) {
	const pre = `property "`
	i := strings.Index(reason, pre)
	if i < 0 {
		return "", false
	}
	rest := reason[i+len(pre):]
	j := strings.IndexByte(rest, '"')
	if j < 0 {
		return "", false
	}
	return rest[:j], true
}

// firstSchemaError finds the first schema violation inside err, looking
// through MultiErrors.
func firstSchemaError(err error) *openapi3.SchemaError {
	switch e := err.(type) {
	case *openapi3.SchemaError:
		return e
	case openapi3.MultiError:
		for _, one := range e {
			if se := firstSchemaError(one); se != nil {
				return se
			}
		}
	}
	return nil
}

func dedupe(ss []string) []string {
	seen := make(map[string]bool, len(ss))
	out := ss[:0]
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
