// Package cli is the switchyard command line: the commands of the same
// binary that serves, each a thin function over the client generated from
// the OpenAPI document (gen/apiclient): parse flags, call, print. It never
// imports the server; main hands it the function that serves.
//
// One printer writes every answer (a table for people, -o json or -o yaml
// for scripts), and one place turns an error into its message on stderr
// and the exit code: 0 on success, 1 on an error, 2 on a usage error.
package cli
