package httpapi

import (
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/switchyard/switchyard/server/apperr"
)

// static serves the dashboard from PUBLIC_DIR as a single-page app: files
// that exist are served, hashed assets are cached for a year, and any other
// path falls back to index.html so client-side routes survive a reload.
// Everything it answers carries the pages' Content-Security-Policy,
// X-Frame-Options and Referrer-Policy (headers.go): index.html is the
// page of every dashboard route and of /api/docs, and any other HTML file
// in PUBLIC_DIR gets them as well.
type static struct {
	dir   string
	files http.Handler
	errs  errorWriter
}

func newStatic(dir string, errs errorWriter) *static {
	return &static{dir: dir, files: http.FileServer(http.Dir(dir)), errs: errs}
}

func (s *static) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		s.errs.write(w, r, apperr.E(apperr.MethodNotAllowed, "method not allowed on this route"))
		return
	}
	index := filepath.Join(s.dir, "index.html")
	if s.dir == "" || !isFile(index) {
		s.errs.write(w, r, apperr.E(apperr.NotFound, "not found (no dashboard is installed in PUBLIC_DIR)"))
		return
	}
	setPageHeaders(w.Header())
	clean := path.Clean("/" + r.URL.Path)
	if clean != "/" && isFile(filepath.Join(s.dir, filepath.FromSlash(clean))) {
		if strings.HasPrefix(clean, "/assets/") {
			// Vite names these files by content hash: they never change.
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		}
		s.files.ServeHTTP(w, r)
		return
	}
	w.Header().Set("Cache-Control", "no-cache")
	http.ServeFile(w, r, index)
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}
