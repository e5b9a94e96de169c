// Package plan computes what applying a flags file would do: a pure
// function of the file and of what the server holds (State), tested without
// a server. diff prints a plan; apply executes it. No write is decided while
// printing and nothing is printed while writing.
package plan
