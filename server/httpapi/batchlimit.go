package httpapi

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"

	"github.com/switchyard/switchyard/server/measure"
)

// batchOperations are the ingest operations whose body is an array of at
// most measure.MaxBatchItems items (docs/reference/limits.md, Requests).
var batchOperations = map[string]bool{"ingestImpressions": true, "ingestEvents": true, "ingestSummaries": true}

// limitBatch answers 413 to an ingest batch of more than measure.MaxBatchItems
// items before the body is validated or decoded: it counts the array's
// elements as a token stream and stops at the first one too many. The
// contract wants 413 here, not the 422 a maxItems in the document would
// give. Bodies that are not a JSON array pass on unchanged, for decodeBatch
// to reject (the validator skips these bodies). Runs after findRoute.
func limitBatch(errs errorWriter) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			m := routeFrom(r)
			if m == nil || r.Body == nil || !batchOperations[m.route.Operation.OperationID] {
				next.ServeHTTP(w, r)
				return
			}
			var seen bytes.Buffer
			n, err := countItems(io.TeeReader(r.Body, &seen), measure.MaxBatchItems+1)
			if n > measure.MaxBatchItems {
				errs.write(w, r, measure.ErrBatchTooLarge)
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
	// A byte scanner, not a decoder: it allocates nothing per item and stops
	// at item stop, so an oversized batch is refused before it is parsed.
	br := bufio.NewReaderSize(r, 32<<10)
	depth, n := 0, 0
	inString, escaped, counted := false, false, false
	for {
		c, err := br.ReadByte()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case ',':
			if depth == 1 {
				counted = false
			}
			continue
		case ']', '}':
			depth--
			if depth <= 0 {
				return n, nil
			}
			continue
		}
		if depth == 0 && c != '[' {
			return 0, nil // not an array: the decoder reports it
		}
		if depth == 1 && !counted {
			counted = true
			n++
			if n >= stop {
				return n, nil
			}
		}
		switch c {
		case '[', '{':
			depth++
		case '"':
			inString = true
		}
	}
}
