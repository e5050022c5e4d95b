package pineconetest

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/pb33f/libopenapi"
	validatorpkg "github.com/pb33f/libopenapi-validator"
	verrors "github.com/pb33f/libopenapi-validator/errors"
)

// controlOpenAPI is Pinecone's published control-plane document, the
// contract of every request the handler accepts and every response it
// gives.
//
//go:embed spec/db_control_2025-10.oas.yaml
var controlOpenAPI []byte

// validator checks HTTP exchanges against controlOpenAPI. The library does
// not document its validator as safe for concurrent use, hence the mutex.
type validator struct {
	mu sync.Mutex
	v  validatorpkg.Validator
}

// The document takes about half a second to load and compile, so every
// server of a process shares one validator.
var (
	validatorOnce sync.Once
	shared        *validator
	sharedErr     error
)

func newValidator() (*validator, error) {
	validatorOnce.Do(func() {
		doc, err := libopenapi.NewDocument(controlOpenAPI)
		if err != nil {
			sharedErr = fmt.Errorf("pineconetest: load the control-plane OpenAPI document: %w", err)
			return
		}
		v, errs := validatorpkg.NewValidator(doc)
		if len(errs) > 0 {
			sharedErr = fmt.Errorf("pineconetest: build the control-plane validator: %v", errs)
			return
		}
		shared = &validator{v: v}
	})
	return shared, sharedErr
}

func (v *validator) request(r *http.Request) []*verrors.ValidationError {
	v.mu.Lock()
	defer v.mu.Unlock()
	_, errs := v.v.ValidateHttpRequest(r)
	return errs
}

func (v *validator) response(r *http.Request, res *http.Response) []*verrors.ValidationError {
	v.mu.Lock()
	defer v.mu.Unlock()
	_, errs := v.v.ValidateHttpResponse(r, res)
	return errs
}

func describeErrors(errs []*verrors.ValidationError) string {
	var b strings.Builder
	for _, e := range errs {
		fmt.Fprintf(&b, "%s: %s; ", e.Message, e.Reason)
		for _, se := range e.SchemaValidationErrors {
			fmt.Fprintf(&b, "%s at %s; ", se.Reason, se.FieldPath)
		}
	}
	return b.String()
}

// controlPlane answers describe-index (GET /indexes/{name}) and
// list-indexes (GET /indexes). Each request is validated against the
// document first (a refusal is a 400 and a protocol error), then the API
// key is checked; each answer is validated before it is sent (a mismatch
// is a protocol error: the fixture would not be what Pinecone sends).
// Injected failures and operations outside those two are answered with
// Pinecone's error shape without response validation: the document lists
// no 429 or 503 for these operations, though Pinecone sends them.
func (s *Server) controlPlane() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "read body", http.StatusBadRequest)
			return
		}
		clone := func() *http.Request {
			c := r.Clone(r.Context())
			c.Body = io.NopCloser(bytes.NewReader(body))
			return c
		}
		op := operation(r)
		s.countCall(op)
		if s.opts.Logger != nil {
			s.opts.Logger.Info("pinecone control", "operation", op, "path", r.URL.Path)
		}
		if errs := s.validate.request(clone()); len(errs) > 0 {
			msg := describeErrors(errs)
			s.protocolError("%s %s: request does not match the OpenAPI document: %s", r.Method, r.URL.Path, msg)
			writeError(w, http.StatusBadRequest, "INVALID_ARGUMENT", msg)
			return
		}
		if !s.keyOK(r.Header.Get("Api-Key")) {
			s.answer(w, clone(), http.StatusUnauthorized, errorBody(http.StatusUnauthorized, "UNAUTHENTICATED", "Invalid API Key"))
			return
		}
		s.mu.Lock()
		fail := 0
		if len(s.controlFails) > 0 {
			fail, s.controlFails = s.controlFails[0], s.controlFails[1:]
		}
		s.mu.Unlock()
		if fail != 0 {
			writeError(w, fail, http.StatusText(fail), "injected failure")
			return
		}
		switch op {
		case "describe_index":
			name := strings.TrimPrefix(r.URL.Path, "/indexes/")
			if name != s.opts.IndexName {
				s.answer(w, clone(), http.StatusNotFound, errorBody(http.StatusNotFound, "NOT_FOUND", fmt.Sprintf("Resource %s not found", name)))
				return
			}
			s.answer(w, clone(), http.StatusOK, s.indexModel())
		case "list_indexes":
			s.answer(w, clone(), http.StatusOK, map[string]any{"indexes": []any{s.indexModel()}})
		default:
			writeError(w, http.StatusNotImplemented, "UNIMPLEMENTED", "pineconetest answers describe_index and list_indexes only")
		}
	})
}

func operation(r *http.Request) string {
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/indexes":
		return "list_indexes"
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/indexes/") && !strings.Contains(r.URL.Path[len("/indexes/"):], "/"):
		return "describe_index"
	}
	return r.Method + " " + r.URL.Path
}

// indexModel is the IndexModel of the served index: a serverless index on
// the data plane's loopback address.
func (s *Server) indexModel() map[string]any {
	m := map[string]any{
		"name":                s.opts.IndexName,
		"metric":              s.opts.Metric,
		"host":                s.DataHost(),
		"vector_type":         s.opts.VectorType,
		"deletion_protection": "disabled",
		"spec": map[string]any{"serverless": map[string]any{
			"cloud": "aws", "region": "us-east-1",
			"read_capacity": map[string]any{"mode": "OnDemand", "status": map[string]any{"state": "Ready"}},
		}},
		"status": map[string]any{"ready": true, "state": "Ready"},
	}
	if s.opts.VectorType == "dense" {
		m["dimension"] = s.opts.Dimension
	}
	return m
}

func errorBody(status int, code, msg string) map[string]any {
	return map[string]any{"status": status, "error": map[string]any{"code": code, "message": msg}}
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(errorBody(status, code, msg))
}

// answer validates the response against the document, records a mismatch,
// and sends it either way (so the client's handling is still exercised).
func (s *Server) answer(w http.ResponseWriter, r *http.Request, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	rec := httptest.NewRecorder()
	rec.Header().Set("Content-Type", "application/json")
	rec.WriteHeader(status)
	_, _ = rec.Write(body)
	res := rec.Result()
	res.Request = r
	if errs := s.validate.response(r, res); len(errs) > 0 {
		s.protocolError("%s %s → %d: response does not match the OpenAPI document: %s", r.Method, r.URL.Path, status, describeErrors(errs))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
