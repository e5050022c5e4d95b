package pineconetest

import (
	"context"
	"fmt"
	"math"

	"github.com/agents-mcp/agents-mcp/internal/pineconetest/wirepb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// Pinecone's data-plane limits (docs.pinecone.io, "Limits").
const (
	maxUpsertVectors  = 1000
	maxRequestBytes   = 2 << 20
	maxIDBytes        = 512
	maxMetadataBytes  = 40 << 10
	maxTopK           = 10000
	maxTopKWithFields = 1000 // with values or metadata in the response
	maxFetchIDs       = 1000
	maxDeleteIDs      = 1000
)

// dataPlane implements VectorService over a store. Methods it does not
// implement (Update, List, namespaces' creation and listing, fetch by
// metadata) answer UNIMPLEMENTED.
type dataPlane struct {
	wirepb.UnimplementedVectorServiceServer
	s *Server
}

func invalid(format string, args ...any) error {
	return status.Errorf(codes.InvalidArgument, format, args...)
}

func (d *dataPlane) Upsert(_ context.Context, req *wirepb.UpsertRequest) (*wirepb.UpsertResponse, error) {
	if n := proto.Size(req); n > maxRequestBytes {
		return nil, invalid("Request size %d bytes exceeds the limit of %d bytes", n, maxRequestBytes)
	}
	if len(req.Vectors) == 0 {
		return nil, invalid("No vectors provided")
	}
	if len(req.Vectors) > maxUpsertVectors {
		return nil, invalid("Batch size %d exceeds the limit of %d vectors", len(req.Vectors), maxUpsertVectors)
	}
	// Validate the whole batch first: Pinecone refuses a request with one
	// bad vector as a whole.
	for _, v := range req.Vectors {
		if err := d.checkID(v.Id); err != nil {
			return nil, err
		}
		if v.SparseValues != nil {
			return nil, invalid("Vector %q: sparse values are not supported by a dense index", v.Id)
		}
		if err := d.checkValues(fmt.Sprintf("Vector %q", v.Id), v.Values); err != nil {
			return nil, err
		}
		if err := checkMetadata(v.Id, v.Metadata); err != nil {
			return nil, err
		}
	}
	for _, v := range req.Vectors {
		d.s.store.upsert(req.Namespace, v.Id, record{values: v.Values, metadata: v.Metadata})
	}
	return &wirepb.UpsertResponse{UpsertedCount: uint32(len(req.Vectors))}, nil
}

func (d *dataPlane) checkID(id string) error {
	if id == "" {
		return invalid("Vector ID must not be empty")
	}
	if len(id) > maxIDBytes {
		return invalid("Vector ID exceeds the maximum length of %d bytes", maxIDBytes)
	}
	return nil
}

func (d *dataPlane) checkValues(what string, values []float32) error {
	if len(values) != d.s.store.dim {
		return invalid("%s dimension %d does not match the dimension of the index %d", what, len(values), d.s.store.dim)
	}
	nonZero := false
	for _, x := range values {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return invalid("%s contains NaN or infinite values", what)
		}
		nonZero = nonZero || x != 0
	}
	if !nonZero && d.s.store.metric == "cosine" {
		return invalid("%s: dense vectors must contain at least one non-zero value", what)
	}
	return nil
}

// checkMetadata enforces Pinecone's metadata rules: values are strings,
// numbers, booleans or lists of strings, and the whole is at most 40 KB.
func checkMetadata(id string, md *structpb.Struct) error {
	if md == nil {
		return nil
	}
	if n := proto.Size(md); n > maxMetadataBytes {
		return invalid("Metadata size is %d bytes, which exceeds the limit of %d bytes per vector", n, maxMetadataBytes)
	}
	for k, v := range md.Fields {
		switch x := v.GetKind().(type) {
		case *structpb.Value_StringValue, *structpb.Value_NumberValue, *structpb.Value_BoolValue:
		case *structpb.Value_ListValue:
			for _, e := range x.ListValue.Values {
				if _, ok := e.GetKind().(*structpb.Value_StringValue); !ok {
					return invalid("Vector %q: metadata field %q: lists may hold strings only", id, k)
				}
			}
		default:
			return invalid("Vector %q: metadata field %q must be a string, number, boolean or list of strings", id, k)
		}
	}
	return nil
}

// filterFunc compiles a request's filter into a predicate, refusing an
// invalid filter before any vector is looked at.
func filterFunc(f *structpb.Struct) (func(record) bool, error) {
	if _, err := matchFilter(f, &structpb.Struct{}); err != nil {
		return nil, invalid("Invalid filter: %v", err)
	}
	return func(r record) bool {
		ok, _ := matchFilter(f, r.metadata)
		return ok
	}, nil
}

func (d *dataPlane) Query(_ context.Context, req *wirepb.QueryRequest) (*wirepb.QueryResponse, error) {
	if len(req.Queries) > 0 || req.SparseVector != nil {
		return nil, invalid("Only the vector or id of a dense query is supported")
	}
	k := int(req.TopK)
	switch {
	case k < 1:
		return nil, invalid("top_k must be at least 1")
	case k > maxTopK:
		return nil, invalid("top_k %d exceeds the limit of %d", k, maxTopK)
	case k > maxTopKWithFields && (req.IncludeMetadata || req.IncludeValues):
		return nil, invalid("top_k %d exceeds the limit of %d when values or metadata are included", k, maxTopKWithFields)
	}
	q := req.Vector
	switch {
	case len(q) > 0 && req.Id != "":
		return nil, invalid("Query by vector or by id, not both")
	case req.Id != "":
		r, ok := d.s.store.get(req.Namespace, req.Id)
		if !ok {
			return &wirepb.QueryResponse{Namespace: req.Namespace, Usage: usage()}, nil
		}
		q = r.values
	default:
		if err := d.checkValues("Query vector", q); err != nil {
			return nil, err
		}
	}
	match, err := filterFunc(req.Filter)
	if err != nil {
		return nil, err
	}
	res := &wirepb.QueryResponse{Namespace: req.Namespace, Usage: usage()}
	for _, m := range d.s.store.query(req.Namespace, q, k, match) {
		sv := &wirepb.ScoredVector{Id: m.id, Score: m.score}
		if req.IncludeValues {
			sv.Values = m.rec.values
		}
		if req.IncludeMetadata {
			sv.Metadata = m.rec.metadata
		}
		res.Matches = append(res.Matches, sv)
	}
	d.s.logQuery(req.Namespace, res.Matches)
	return res, nil
}

func usage() *wirepb.Usage {
	one := uint32(1)
	return &wirepb.Usage{ReadUnits: &one}
}

func (d *dataPlane) Fetch(_ context.Context, req *wirepb.FetchRequest) (*wirepb.FetchResponse, error) {
	if len(req.Ids) == 0 {
		return nil, invalid("No ids provided")
	}
	if len(req.Ids) > maxFetchIDs {
		return nil, invalid("Fetch of %d ids exceeds the limit of %d", len(req.Ids), maxFetchIDs)
	}
	res := &wirepb.FetchResponse{Vectors: map[string]*wirepb.Vector{}, Namespace: req.Namespace, Usage: usage()}
	for _, id := range req.Ids {
		if r, ok := d.s.store.get(req.Namespace, id); ok {
			res.Vectors[id] = &wirepb.Vector{Id: id, Values: r.values, Metadata: r.metadata}
		}
	}
	return res, nil
}

// Delete removes by ids, by filter, or everything in the namespace
// (exactly one of the three). A namespace that does not exist is
// NOT_FOUND, as in Pinecone's serverless indexes.
func (d *dataPlane) Delete(_ context.Context, req *wirepb.DeleteRequest) (*wirepb.DeleteResponse, error) {
	modes := 0
	for _, set := range []bool{len(req.Ids) > 0, req.DeleteAll, req.Filter != nil} {
		if set {
			modes++
		}
	}
	if modes != 1 {
		return nil, invalid("Exactly one of ids, delete_all and filter must be given")
	}
	if len(req.Ids) > maxDeleteIDs {
		return nil, invalid("Delete of %d ids exceeds the limit of %d", len(req.Ids), maxDeleteIDs)
	}
	keep := func(string, record) bool { return true }
	switch {
	case len(req.Ids) > 0:
		ids := map[string]bool{}
		for _, id := range req.Ids {
			if err := d.checkID(id); err != nil {
				return nil, err
			}
			ids[id] = true
		}
		keep = func(id string, _ record) bool { return ids[id] }
	case req.Filter != nil:
		match, err := filterFunc(req.Filter)
		if err != nil {
			return nil, err
		}
		keep = func(_ string, r record) bool { return match(r) }
	}
	if !d.s.store.hasNamespace(req.Namespace) {
		return nil, status.Error(codes.NotFound, "Namespace not found")
	}
	d.s.store.remove(req.Namespace, keep)
	return &wirepb.DeleteResponse{}, nil
}

func (d *dataPlane) DeleteNamespace(_ context.Context, req *wirepb.DeleteNamespaceRequest) (*wirepb.DeleteResponse, error) {
	if !d.s.store.dropNamespace(req.Namespace) {
		return nil, status.Error(codes.NotFound, "Namespace not found")
	}
	return &wirepb.DeleteResponse{}, nil
}

func (d *dataPlane) DescribeIndexStats(_ context.Context, req *wirepb.DescribeIndexStatsRequest) (*wirepb.DescribeIndexStatsResponse, error) {
	match, err := filterFunc(req.Filter)
	if err != nil {
		return nil, err
	}
	dim := uint32(d.s.store.dim)
	metric, kind := d.s.store.metric, "dense"
	res := &wirepb.DescribeIndexStatsResponse{
		Namespaces: map[string]*wirepb.NamespaceSummary{},
		Dimension:  &dim, Metric: &metric, VectorType: &kind,
	}
	for ns, n := range d.s.store.counts(match) {
		res.Namespaces[ns] = &wirepb.NamespaceSummary{VectorCount: n}
		res.TotalVectorCount += n
	}
	return res, nil
}
