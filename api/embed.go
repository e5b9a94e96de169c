// Package api embeds openapi.yaml, the single source of Switchyard's HTTP
// contract, so that the server validates requests against it and serves it at
// GET /api/openapi.json. The generator's own embedded copy leaves out the
// hand-written routes (/health, /stream, /flags/snapshot), so the document is
// embedded whole from here.
package api

import _ "embed"

// OpenAPI is the contents of api/openapi.yaml.
//
//go:embed openapi.yaml
var OpenAPI []byte
