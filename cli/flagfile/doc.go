// Package flagfile is the file that keeps flags as code: projects, their
// environments and, per environment, segments and flags, with the API's own
// field names (docs/flags-as-code.md). It reads a file (YAML or JSON) and
// checks it without a server, each problem at its line, against the JSON
// Schema that it derives from the OpenAPI document and the rules the server
// itself applies (package check); and it writes one back for export.
//
// A field the file leaves out is not managed by it: Fields holds only the
// fields the file gives, so that the plan compares and writes those alone.
package flagfile
