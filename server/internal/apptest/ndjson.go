package apptest

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
)

// ndjson is the media type of the raw exports, whose document schema is that
// of each line: kin-openapi knows no decoder for it, so checkResponse hands
// such bodies here and checks the rest of the response without the body.
const ndjson = "application/x-ndjson"

func isNDJSON(resp *http.Response) bool {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return mt == ndjson
}

// checkNDJSON checks every line of an NDJSON body against the schema the
// document gives its status (gunzipped first when the client asked for gzip
// itself, so that the transport left it encoded): each line one JSON value
// ending in a newline, valid against that schema.
func checkNDJSON(t testing.TB, req *http.Request, route *routers.Route, resp *http.Response, raw []byte) {
	t.Helper()
	ref := route.Operation.Responses.Status(resp.StatusCode)
	if ref == nil || ref.Value == nil {
		return // ValidateResponse reports an undocumented status
	}
	mt := ref.Value.Content.Get(ndjson)
	if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
		t.Errorf("%s %s answered %d with %s, which api/openapi.yaml does not document", req.Method, req.URL.Path, resp.StatusCode, ndjson)
		return
	}
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err == nil {
			raw, err = io.ReadAll(zr)
		}
		if err != nil {
			t.Errorf("%s %s: gzip body: %v", req.Method, req.URL.Path, err)
			return
		}
	}
	if len(raw) > 0 && raw[len(raw)-1] != '\n' {
		t.Errorf("%s %s: the NDJSON body does not end with a newline", req.Method, req.URL.Path)
	}
	for i, line := range bytes.Split(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n")) {
		if len(raw) == 0 {
			break
		}
		var v any
		if err := json.Unmarshal(line, &v); err != nil {
			t.Errorf("%s %s: NDJSON line %d is not JSON: %v\n%s", req.Method, req.URL.Path, i+1, err, line)
			continue
		}
		if err := mt.Schema.Value.VisitJSON(v, openapi3.VisitAsResponse(), openapi3.MultiErrors()); err != nil {
			t.Errorf("%s %s: NDJSON line %d breaks api/openapi.yaml: %v\n%s", req.Method, req.URL.Path, i+1, err, line)
		}
	}
}
