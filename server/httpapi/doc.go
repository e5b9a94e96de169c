// Package httpapi is Switchyard's HTTP surface: the router, the middleware
// chain, request validation against api/openapi.yaml, the strict handlers (one
// file per resource) and the one error writer.
//
// A handler converts the request, calls one method of identity, core, notify or
// measure and converts the result; it never picks an error status. Every error,
// whether it comes from the router, the validator, parameter binding, body
// decoding or a service, goes through writeError, which maps apperr kinds to
// HTTP statuses in one place.
package httpapi
