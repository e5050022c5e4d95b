// Package console serves the admin console: a few static HTML, CSS and
// JavaScript files, embedded in the binary, that draw the admin REST API
// (api/admin) for a person in a browser. It holds no data and checks no
// credentials itself: every figure the pages show comes from /admin/v1
// with the credential the person signed in with, so the console shows no
// more than the API would give that credential as JSON (ADR 0013).
package console

import (
	"embed"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

// Prefix is the path the console is served under: mount the handler with
// the prefix kept, e.g. mux.Handle(console.Prefix, console.Handler()).
const Prefix = "/admin/"

//go:embed static
var static embed.FS

// ContentSecurityPolicy is sent with every console response. Scripts,
// styles and connections come from this origin only, and no inline
// script or style runs, so that text shown from the API (a task request, a
// tool's output) cannot become code even if a page forgot to escape it.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Handler serves the console under [Prefix]: index.html at the prefix
// itself, the files of static/ by name, 404 for anything else. Only GET
// and HEAD are allowed.
func Handler() http.Handler {
	files, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embed directive above guarantees the directory
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		// The files change with the binary: revalidate, so that an
		// upgraded server is not drawn by the old script.
		h.Set("Cache-Control", "no-cache")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name, ok := strings.CutPrefix(r.URL.Path, Prefix)
		if !ok {
			http.NotFound(w, r)
			return
		}
		if name == "" {
			name = "index.html"
		}
		// Only the named regular files: no directory listings, and no
		// redirect of index.html as http.FileServer would do.
		if path.Clean(name) != name {
			http.NotFound(w, r)
			return
		}
		f, err := files.Open(name)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		defer f.Close()
		st, err := f.Stat()
		rs, seekable := f.(io.ReadSeeker)
		if err != nil || st.IsDir() || !seekable {
			http.NotFound(w, r)
			return
		}
		// Embedded files have no modification time: ServeContent then
		// sends no Last-Modified, and the type comes from the name.
		http.ServeContent(w, r, name, time.Time{}, rs)
	})
}
