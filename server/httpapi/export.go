package httpapi

import (
	"context"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"
	"github.com/klauspost/compress/gzip"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/audit"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/internal/jsonappend"
	"github.com/switchyard/switchyard/server/measure"
)

// exportWriteTimeout bounds each write of a batch to an export's client: a
// client that takes none of it within this time is gone.
const exportWriteTimeout = time.Minute

// exportHandler serves GET …/impressions/export and GET …/events/export
// (docs/export.md): NDJSON streamed a batch at a time, which the strict
// server's buffered responses cannot do, so the routes are tagged
// handwritten. They sit behind the API chain like every generated route:
// authenticated, and validated against the document (from and to present
// and RFC 3339, else 422).
type exportHandler struct {
	measure *measure.Service
	audit   *audit.Service
	errs    errorWriter
	logger  *slog.Logger
}

func (h exportHandler) impressions(w http.ResponseWriter, r *http.Request) {
	envID, from, to, err := exportParams(r)
	if err != nil {
		h.errs.write(w, r, err)
		return
	}
	exp, err := h.measure.ExportImpressions(r.Context(), auth.FromContext(r.Context()), envID, from, to)
	if err != nil {
		h.errs.write(w, r, err)
		return
	}
	serveExport(h, w, r, exp, appendImpression)
}

func (h exportHandler) events(w http.ResponseWriter, r *http.Request) {
	envID, from, to, err := exportParams(r)
	if err != nil {
		h.errs.write(w, r, err)
		return
	}
	exp, err := h.measure.ExportGoalEvents(r.Context(), auth.FromContext(r.Context()), envID, from, to)
	if err != nil {
		h.errs.write(w, r, err)
		return
	}
	serveExport(h, w, r, exp, appendGoalEvent)
}

// exportParams reads the path's environment and the range. The validator
// has checked both against the document already; a time its pattern admits
// but the calendar does not (February 30th) is refused here.
func exportParams(r *http.Request) (envID uuid.UUID, from, to time.Time, err error) {
	if envID, err = uuid.Parse(mux.Vars(r)["env_id"]); err != nil {
		return envID, from, to, apperr.E(apperr.NotFound, "environment not found")
	}
	q := r.URL.Query()
	if from, err = time.Parse(time.RFC3339, q.Get("from")); err != nil {
		return envID, from, to, apperr.Field("from", "must be an RFC 3339 time")
	}
	if to, err = time.Parse(time.RFC3339, q.Get("to")); err != nil {
		return envID, from, to, apperr.Field("to", "must be an RFC 3339 time")
	}
	return envID, from, to, nil
}

// rows is what serveExport needs of an export (measure.Export).
type rows[T any] interface {
	Each(ctx context.Context, fn func([]T) error) error
}

var _ rows[db.ListImpressionsForExportRow] = (*measure.Export[db.ListImpressionsForExportRow])(nil)

// serveExport streams exp's rows, each encoded by appendRow and ended with
// a newline. Nothing is written before the first batch has been read, so a
// failure up to then answers the usual JSON error. A failure after it can
// no longer change the status: it is logged and the response is cut off
// (http.ErrAbortHandler closes the connection without ending the chunked
// body, or resets the HTTP/2 stream), which every client reports as an
// error, and a gzip body lacks its trailer, so a truncated export never
// looks complete (docs/export.md, Failures).
func serveExport[T any](h exportHandler, w http.ResponseWriter, r *http.Request, exp rows[T], appendRow func([]byte, T) []byte) {
	out := &exportWriter{w: w, rc: http.NewResponseController(w), gzip: acceptsGzip(r.Header.Values("Accept-Encoding"))}
	var buf []byte // one batch's lines, reused: about 1 MB at most
	sent := 0
	err := exp.Each(r.Context(), func(batch []T) error {
		sent += len(batch)
		buf = buf[:0]
		for _, row := range batch {
			buf = appendRow(buf, row)
			buf = append(buf, '\n')
		}
		return out.write(buf)
	})
	if err == nil {
		err = out.close()
	}
	switch {
	case err == nil:
	case !out.started:
		h.errs.write(w, r, err)
	case out.err != nil || r.Context().Err() != nil:
		// The client went away, or stopped reading for exportWriteTimeout:
		// nobody is left to tell.
	default:
		h.logger.ErrorContext(r.Context(), "export cut off",
			"method", r.Method, "path", r.URL.Path, "rows_sent", sent, "err", err.Error())
		panic(http.ErrAbortHandler)
	}
}

// exportWriter writes an export's response: the head on the first write,
// then each batch, flushed (through gzip when the client accepts it).
type exportWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	gzip    bool
	body    io.Writer // w, or zw over it
	zw      *gzip.Writer
	started bool
	err     error // the first failed write: the client is gone
}

func (x *exportWriter) start() {
	x.started = true
	hdr := x.w.Header()
	hdr.Set("Content-Type", "application/x-ndjson")
	hdr.Set("Vary", "Accept-Encoding")
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("X-Accel-Buffering", "no") // a proxy passes batches on as they come
	x.body = x.w
	if x.gzip {
		hdr.Set("Content-Encoding", "gzip")
		// The fastest level: NDJSON of repetitive keys compresses about
		// sevenfold even so, and a higher level would make compression,
		// not the database or the network, the export's pace. For the same
		// reason the compressor is klauspost/compress's rather than the
		// standard library's: the same format, any gzip reader decodes it,
		// in about half the CPU.
		x.zw, _ = gzip.NewWriterLevel(x.w, gzip.BestSpeed)
		x.body = x.zw
	}
	x.w.WriteHeader(http.StatusOK)
}

// write sends one batch and flushes it, so that the client receives rows as
// they are read rather than when a buffer fills.
func (x *exportWriter) write(p []byte) error {
	if !x.started {
		x.start()
	}
	_ = x.rc.SetWriteDeadline(time.Now().Add(exportWriteTimeout))
	_, err := x.body.Write(p)
	if err == nil && x.zw != nil {
		err = x.zw.Flush()
	}
	if err == nil {
		err = x.rc.Flush()
	}
	if err != nil {
		x.err = err
	}
	return err
}

// close ends the response: the head of an empty export, and gzip's trailer.
func (x *exportWriter) close() error {
	if !x.started {
		x.start()
	}
	if x.zw != nil {
		_ = x.rc.SetWriteDeadline(time.Now().Add(exportWriteTimeout))
		if err := x.zw.Close(); err != nil {
			x.err = err
			return err
		}
	}
	return nil
}

// appendImpression appends im as the impression list's items are written
// (apiserver.Impression, through listedImpression), without the reflection and
// the decoding of context into a map that would make encoding, not the
// database, the pace of an export: the same members with the same values
// (context is the stored JSON, compacted). export_test.go holds the two
// encodings equal and checks the members against the generated type, so
// they cannot drift apart.
func appendImpression(b []byte, im db.ListImpressionsForExportRow) []byte {
	b = append(b, `{"context":`...)
	b = appendRawJSON(b, im.Context)
	b = append(b, `,"evaluated_at":`...)
	b = appendTime(b, im.EvaluatedAt)
	b = append(b, `,"flag_key":`...)
	b = jsonappend.String(b, im.FlagKey)
	b = append(b, `,"id":`...)
	b = strconv.AppendInt(b, im.ID, 10)
	b = append(b, `,"user_id":`...)
	b = appendNullableString(b, im.UserID)
	b = append(b, `,"value":`...)
	b = jsonappend.String(b, im.Value)
	return append(b, '}')
}

// appendGoalEvent appends e as the document's GoalEvent, the same way.
func appendGoalEvent(b []byte, e db.ListGoalEventsForExportRow) []byte {
	b = append(b, `{"context":`...)
	b = appendRawJSON(b, e.Context)
	b = append(b, `,"event_key":`...)
	b = jsonappend.String(b, e.EventKey)
	b = append(b, `,"id":`...)
	b = strconv.AppendInt(b, e.ID, 10)
	b = append(b, `,"occurred_at":`...)
	b = appendTime(b, e.OccurredAt)
	b = append(b, `,"user_id":`...)
	b = appendNullableString(b, e.UserID)
	b = append(b, `,"value":`...)
	if e.Value == nil {
		b = append(b, "null"...)
	} else {
		b = appendFloat(b, *e.Value)
	}
	return append(b, '}')
}

// appendTime writes t as encoding/json does (RFC 3339 with nanoseconds).
func appendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

func appendNullableString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return jsonappend.String(b, *s)
}

// appendRawJSON writes a stored jsonb value, as PostgreSQL renders it,
// without the spaces it puts after commas and colons. jsonb's text is valid
// JSON on one line (newlines inside strings are escaped), so dropping
// whitespace outside strings is all there is to do.
func appendRawJSON(b []byte, raw string) []byte {
	if raw == "" {
		return append(b, "null"...)
	}
	inString, escaped := false, false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			b = append(b, c)
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '"':
			inString = true
		}
		b = append(b, c)
	}
	return b
}

// appendFloat writes f as encoding/json writes a float64: the shortest
// representation, with an exponent only below 1e-6 or from 1e21. Values
// stored through the API are always finite; anything else is written null.
func appendFloat(b []byte, f float64) []byte {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return append(b, "null"...)
	}
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-07 becomes e-7, as encoding/json writes it.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
