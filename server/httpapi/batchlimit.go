package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/switchyard/switchyard/server/core"
)

// batchOperations are the ingest operations whose body is an array of at
// most core.MaxBatchItems items (spec, Limits: batch size).
var batchOperations = map[string]bool{"ingestImpressions": true, "ingestEvents": true}

// limitBatch answers 413 to an ingest batch of more than core.MaxBatchItems
// items before the body is validated or decoded: it counts the array's
// elements as a token stream and stops at the first one too many. The
// contract wants 413 here, not the 422 a maxItems in the document would
// give. Bodies that are not a JSON array pass on unchanged, for the
// validator to reject. Runs after findRoute.
func limitBatch(errs errorWriter) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			m := routeFrom(r)
			if m == nil || r.Body == nil || !batchOperations[m.route.Operation.OperationID] {
				next.ServeHTTP(w, r)
				return
			}
			var seen bytes.Buffer
			n, err := countItems(io.TeeReader(r.Body, &seen), core.MaxBatchItems+1)
			if n > core.MaxBatchItems {
				errs.write(w, r, core.ErrBatchTooLarge)
				return
			}
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				errs.write(w, r, err) // over the 1 MiB body limit: 413
				return
			}
			// What the counter read, then whatever it did not.
			r.Body = struct {
				io.Reader
				io.Closer
			}{io.MultiReader(&seen, r.Body), r.Body}
			next.ServeHTTP(w, r)
		})
	}
}

// countItems counts the elements of the JSON array read from r, stopping
// once it has seen stop of them. A body that is not an array counts 0; err
// reports malformed JSON or a read failure.
func countItems(r io.Reader, stop int) (int, error) {
	dec := json.NewDecoder(r)
	tok, err := dec.Token()
	if err != nil {
		return 0, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return 0, nil
	}
	n := 0
	for n < stop && dec.More() {
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
