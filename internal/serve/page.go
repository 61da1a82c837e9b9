package serve

import (
	"embed"
	"net/http"
	"path"
)

// The live page: three files, embedded, loading nothing from elsewhere.
//
//go:embed page/index.html page/app.js page/app.css
var pageFiles embed.FS

// PagePolicy is the page's Content-Security-Policy: the report's (nothing
// fetched but what is named) with the page's own script and stylesheet
// and the API on the same origin; nothing inline.
const PagePolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

var pageTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
}

// page serves GET / and its assets: no data, so no token.
func (s *Server) page(w http.ResponseWriter, r *http.Request, _ string) {
	name := r.URL.Path
	if name == "/" {
		name = "/index.html"
	}
	b, err := pageFiles.ReadFile("page" + name)
	if err != nil {
		writeError(w, http.StatusNotFound, CodeNotFound, "no such file: "+r.URL.Path)
		return
	}
	h := w.Header()
	h.Set("Content-Type", pageTypes[path.Ext(name)])
	h.Set("Content-Security-Policy", PagePolicy)
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(b)
	}
}
