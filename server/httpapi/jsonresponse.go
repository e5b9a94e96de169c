package httpapi

import "net/http"

// jsonResponse writes a value whose JSON encoding is exactly the documented
// body of an operation. Flags use it: eval.Flag, the one wire model, encodes
// as the API's Flag object, so flags need no conversion into generated types
// and back. Tests check every such body against the document.
type jsonResponse struct {
	status int
	body   any
}

func ok(body any) jsonResponse { return jsonResponse{status: http.StatusOK, body: body} }

func (r jsonResponse) visit(w http.ResponseWriter) error {
	writeJSON(w, r.status, r.body)
	return nil
}

// The operations whose responses jsonResponse writes.

func (r jsonResponse) VisitListFlagsResponse(w http.ResponseWriter) error   { return r.visit(w) }
func (r jsonResponse) VisitGetFlagResponse(w http.ResponseWriter) error     { return r.visit(w) }
func (r jsonResponse) VisitPutFlagResponse(w http.ResponseWriter) error     { return r.visit(w) }
func (r jsonResponse) VisitPatchFlagResponse(w http.ResponseWriter) error   { return r.visit(w) }
func (r jsonResponse) VisitPromoteFlagResponse(w http.ResponseWriter) error { return r.visit(w) }
func (r jsonResponse) VisitArchiveFlagResponse(w http.ResponseWriter) error { return r.visit(w) }
func (r jsonResponse) VisitUnarchiveFlagResponse(w http.ResponseWriter) error {
	return r.visit(w)
}
func (r jsonResponse) VisitDiffFlagsResponse(w http.ResponseWriter) error { return r.visit(w) }
