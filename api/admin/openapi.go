package admin

import (
	_ "embed"
	"net/http"
)

// OpenAPI is the OpenAPI 3.1 document of this API, served at
// /admin/v1/openapi.json. Its paths are relative to its server, [Prefix].
//
//go:embed openapi.json
var OpenAPI []byte

// GET /openapi.json
func (h *Handler) openAPI(w http.ResponseWriter, r *http.Request) error {
	if _, err := queryParams(r); err != nil {
		return err
	}
	hd := w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(OpenAPI)
	return nil
}
