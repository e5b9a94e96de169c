// Package sdkgo is the Switchyard Go SDK: it keeps the flags of one environment in memory,
// follows their changes over the server's stream, and evaluates flags locally, in process,
// with no network call per evaluation.
//
// The evaluator itself lives in the subpackage eval, which holds the wire model of a flag and
// the evaluation rules of the specification. The client (connection, store, impressions)
// follows in a later change. Like eval, this package imports only the standard library and
// murmur3, never server code; boundary_test.go enforces that.
package sdkgo
