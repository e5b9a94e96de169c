// Package providertest runs the official OpenFeature OFREP provider for Go
// (github.com/open-feature/go-sdk-contrib/providers/ofrep) against a real
// Switchyard instance. It is a module of its own so that the provider and
// the OpenFeature SDK stay out of the server's dependencies; its path lies
// under server/ so that it may start instances with server/internal/apptest.
// `make test-go` runs it.
package providertest
