// Package pineconetest is a Pinecone index for tests, reached by
// go-pinecone's own client over Pinecone's published wire protocols:
//
//   - the data plane is a gRPC server of VectorService, compiled from the
//     proto Pinecone publishes (spec/db_data_2025-10.proto, the version
//     go-pinecone v5 speaks; package wirepb), over an exact in-memory index:
//     upsert, query (by vector or id, top k, cosine, dot product or
//     Euclidean, metadata filters with $eq $ne $gt $gte $lt $lte $in $nin
//     $exists $and $or, namespaces), fetch, delete (by ids, by filter, a
//     whole namespace) and describe-index-stats, with Pinecone's limits and
//     its INVALID_ARGUMENT refusals;
//   - the control plane is an HTTP handler of describe-index and
//     list-indexes whose every request and response is validated against
//     the OpenAPI document Pinecone publishes (spec/db_control_2025-10.oas.yaml).
//
// Every call must carry the API key (the Api-Key header or gRPC metadata):
// a wrong or missing one is UNAUTHENTICATED (HTTP 401). Tests inject
// failures with [Server.FailNext] (gRPC codes such as RESOURCE_EXHAUSTED or
// UNAVAILABLE) and [Server.FailControlNext] (HTTP statuses).
//
// What it does not model: TLS (the index host is http://127.0.0.1:port, so
// go-pinecone dials in plaintext), eventual consistency (a write is visible
// to the next read), sparse vectors, and the methods of VectorService no
// client here uses (they answer UNIMPLEMENTED).
//
// It listens on loopback only. Only tests and the e2e helper
// scripts/pineconeserver import it.
package pineconetest

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path"
	"sync"
	"time"

	"github.com/agents-mcp/agents-mcp/internal/pineconetest/wirepb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Options configure a [Server]. APIKey and Dimension are required.
type Options struct {
	// APIKey is the only key the server accepts.
	APIKey string
	// IndexName is the index the control plane describes; "agents-mcp" if
	// empty.
	IndexName string
	// Dimension is the index's dimension.
	Dimension int
	// Metric is "cosine" (the default), "dotproduct" or "euclidean".
	Metric string
	// VectorType is what the control plane reports, "dense" by default;
	// "sparse" describes an index without a dimension.
	VectorType string
	// Logger, if set, gets one line per call (method, namespace, outcome,
	// and the ids a query returned); it never logs the API key.
	Logger *slog.Logger
	// DataAddr and ControlAddr are the loopback addresses to listen on;
	// 127.0.0.1:0 (a free port) if empty.
	DataAddr, ControlAddr string
}

// Server is a running test Pinecone: both planes, one index.
type Server struct {
	opts  Options
	store *store

	grpc     *grpc.Server
	dataLn   net.Listener
	http     *http.Server
	ctrlLn   net.Listener
	validate *validator
	wg       sync.WaitGroup

	mu           sync.Mutex
	faults       map[string][]error // by method name, consumed in order
	controlFails []int
	calls        map[string]int
	protocolErrs []string
}

// Start starts both planes on loopback. Close stops them.
func Start(opts Options) (*Server, error) {
	if opts.APIKey == "" || opts.Dimension <= 0 {
		return nil, errors.New("pineconetest: APIKey and a positive Dimension are required")
	}
	if opts.IndexName == "" {
		opts.IndexName = "agents-mcp"
	}
	if opts.Metric == "" {
		opts.Metric = "cosine"
	}
	if opts.VectorType == "" {
		opts.VectorType = "dense"
	}
	v, err := newValidator()
	if err != nil {
		return nil, err
	}
	s := &Server{
		opts: opts, store: newStore(opts.Dimension, opts.Metric), validate: v,
		faults: map[string][]error{}, calls: map[string]int{},
	}
	if s.dataLn, err = listenLoopback(opts.DataAddr); err != nil {
		return nil, err
	}
	if s.ctrlLn, err = listenLoopback(opts.ControlAddr); err != nil {
		s.dataLn.Close()
		return nil, err
	}
	s.grpc = grpc.NewServer(grpc.UnaryInterceptor(s.intercept), grpc.MaxRecvMsgSize(4<<20))
	wirepb.Register(s.grpc, &dataPlane{s: s})
	s.http = &http.Server{Handler: s.controlPlane(), ReadHeaderTimeout: 10 * time.Second}
	s.wg.Go(func() { _ = s.grpc.Serve(s.dataLn) })
	s.wg.Go(func() { _ = s.http.Serve(s.ctrlLn) })
	return s, nil
}

// listenLoopback refuses any address but a loopback one: the server is
// for tests, which must not be reachable from, or reach, the network.
func listenLoopback(addr string) (net.Listener, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("pineconetest: address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("pineconetest: %q is not a loopback address", addr)
	}
	return net.Listen("tcp", addr)
}

// Close stops both planes and waits for them.
func (s *Server) Close() {
	s.grpc.Stop()
	_ = s.http.Close()
	s.wg.Wait()
}

// DataHost is the index host to give go-pinecone (NewIndexConnParams.Host,
// PINECONE_HOST): http://127.0.0.1:port, plaintext gRPC.
func (s *Server) DataHost() string { return "http://" + s.dataLn.Addr().String() }

// ControlURL is the control plane's base URL (PINECONE_CONTROLLER_HOST).
func (s *Server) ControlURL() string { return "http://" + s.ctrlLn.Addr().String() }

// IndexName is the name of the index the control plane describes.
func (s *Server) IndexName() string { return s.opts.IndexName }

// FailNext makes the next n calls of a data-plane method ("Upsert",
// "Query", "Delete", "Fetch", "DescribeIndexStats", …) fail with code,
// after the API key check; calls then succeed again.
func (s *Server) FailNext(method string, code codes.Code, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.faults[method] = append(s.faults[method], status.Errorf(code, "injected %s", code))
	}
}

// FailControlNext makes the next n control-plane requests answer HTTP
// status, with Pinecone's error body, after the API key check.
func (s *Server) FailControlNext(status, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.controlFails = append(s.controlFails, status)
	}
}

// Calls is the number of calls of a data-plane method, or of a
// control-plane operation ("describe_index", "list_indexes"), answered so
// far, failures included.
func (s *Server) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

// ProtocolErrors lists the control-plane requests and responses that did
// not match Pinecone's OpenAPI document. A client that speaks the real
// protocol leaves it empty.
func (s *Server) ProtocolErrors() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.protocolErrs...)
}

func (s *Server) protocolError(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.protocolErrs = append(s.protocolErrs, fmt.Sprintf(format, args...))
}

func (s *Server) countCall(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[name]++
}

// keyOK compares in constant time, as a real server would.
func (s *Server) keyOK(got string) bool {
	return subtle.ConstantTimeCompare([]byte(got), []byte(s.opts.APIKey)) == 1
}

// intercept checks the API key, counts the call, and applies an injected
// failure, before the method runs.
func (s *Server) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	method := path.Base(info.FullMethod)
	s.countCall(method)
	md, _ := metadata.FromIncomingContext(ctx)
	if keys := md.Get("api-key"); len(keys) != 1 || !s.keyOK(keys[0]) {
		s.log(method, "", codes.Unauthenticated)
		return nil, status.Error(codes.Unauthenticated, "Invalid API key")
	}
	s.mu.Lock()
	var fault error
	if q := s.faults[method]; len(q) > 0 {
		fault, s.faults[method] = q[0], q[1:]
	}
	s.mu.Unlock()
	ns := namespaceOf(req)
	if fault != nil {
		s.log(method, ns, status.Code(fault))
		return nil, fault
	}
	res, err := handler(ctx, req)
	s.log(method, ns, status.Code(err))
	return res, err
}

func namespaceOf(req any) string {
	if r, ok := req.(interface{ GetNamespace() string }); ok {
		return nsName(r.GetNamespace())
	}
	return ""
}

func (s *Server) log(method, ns string, code codes.Code) {
	if s.opts.Logger != nil {
		s.opts.Logger.Info("pinecone call", "method", method, "namespace", ns, "code", code.String())
	}
}

func (s *Server) logQuery(ns string, matches []*wirepb.ScoredVector) {
	if s.opts.Logger == nil {
		return
	}
	ids := make([]string, len(matches))
	for i, m := range matches {
		ids[i] = m.Id
	}
	s.opts.Logger.Info("pinecone query", "namespace", nsName(ns), "matches", ids)
}
