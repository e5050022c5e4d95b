package pinecone

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/redact"
	pc "github.com/pinecone-io/go-pinecone/v5/pinecone"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// Pinecone's request limits (docs.pinecone.io, "Limits"). The batch sizes
// stay well below them: a 2 MB request of 100 vectors leaves 20 KB each,
// which metadata at the 40 KB per-vector limit could exceed, so batches are
// cut by size as well as by count.
const (
	maxIDBytes       = 512
	maxDeleteBatch   = 1000
	upsertBatchCount = 100
	upsertBatchBytes = 1_500_000 // of the 2 MB request limit, for headers and framing
	maxTopK          = 1000      // the limit when metadata is included
)

// validateID enforces Pinecone's id rules (non-empty, at most 512 bytes of
// printable ASCII) before a request is sent, so that one bad id is a clear
// EINVALID rather than a server error for the whole batch.
func validateID(id string) error {
	if id == "" {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "vector id is required")
	}
	if len(id) > maxIDBytes {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "vector id %.40q… is %d bytes; Pinecone allows %d", id, len(id), maxIDBytes)
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c < 0x20 || c > 0x7e {
			return agentsmcp.Errorf(agentsmcp.EINVALID, "vector id %q has a byte 0x%02x; Pinecone allows printable ASCII only", id, c)
		}
	}
	return nil
}

// validateValues rejects what Pinecone would reject for a dense vector in
// a cosine index: the wrong size, NaN or infinite values, and the zero
// vector (it has no direction, so no cosine).
func validateValues(what string, values []float32, dims int) error {
	if len(values) != dims {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "%s has %d dimensions; the index has %d", what, len(values), dims)
	}
	nonZero := false
	for _, x := range values {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return agentsmcp.Errorf(agentsmcp.EINVALID, "%s has a NaN or infinite value", what)
		}
		if x != 0 {
			nonZero = true
		}
	}
	if !nonZero {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "%s is the zero vector, which a cosine index cannot hold", what)
	}
	return nil
}

// metadataToStruct converts metadata to Pinecone's form. Empty values are
// dropped: a missing key reads as "" from a Go map, so dropping them keeps
// the meaning and lets [filterToStruct] express "k is empty" as "k does not
// exist". No metadata is nil, which Pinecone stores as none.
func metadataToStruct(m map[string]string) *structpb.Struct {
	var s *structpb.Struct
	for k, v := range m {
		if v == "" {
			continue
		}
		if s == nil {
			s = &structpb.Struct{Fields: make(map[string]*structpb.Value, len(m))}
		}
		s.Fields[k] = structpb.NewStringValue(v)
	}
	return s
}

// structToMetadata converts Pinecone metadata back. Strings are kept as
// they are; numbers and booleans, which only vectors written by other
// clients carry, are formatted; nulls, lists and objects are skipped, since
// a string map cannot hold them faithfully. No fields is nil.
func structToMetadata(s *structpb.Struct) map[string]string {
	if s == nil || len(s.Fields) == 0 {
		return nil
	}
	m := make(map[string]string, len(s.Fields))
	for k, v := range s.Fields {
		switch x := v.GetKind().(type) {
		case *structpb.Value_StringValue:
			if x.StringValue != "" {
				m[k] = x.StringValue
			}
		case *structpb.Value_NumberValue:
			m[k] = strconv.FormatFloat(x.NumberValue, 'g', -1, 64)
		case *structpb.Value_BoolValue:
			m[k] = strconv.FormatBool(x.BoolValue)
		}
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

// filterToStruct turns an equality filter into Pinecone's filter language:
// one clause {"k":{"$eq":"v"}} per key, joined by "$and" when there are
// several, in key order so that the same filter is always the same request.
// An empty value matches vectors without the key, as in vectors.Flat (see
// [metadataToStruct]). No filter is nil.
func filterToStruct(f map[string]string) *structpb.Struct {
	if len(f) == 0 {
		return nil
	}
	keys := make([]string, 0, len(f))
	for k := range f {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	clauses := make([]*structpb.Value, len(keys))
	for i, k := range keys {
		var cond *structpb.Struct
		if v := f[k]; v == "" {
			cond = &structpb.Struct{Fields: map[string]*structpb.Value{"$exists": structpb.NewBoolValue(false)}}
		} else {
			cond = &structpb.Struct{Fields: map[string]*structpb.Value{"$eq": structpb.NewStringValue(v)}}
		}
		clauses[i] = structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{k: structpb.NewStructValue(cond)}})
	}
	if len(clauses) == 1 {
		return clauses[0].GetStructValue()
	}
	return &structpb.Struct{Fields: map[string]*structpb.Value{"$and": structpb.NewListValue(&structpb.ListValue{Values: clauses})}}
}

// toMatches converts a query response, best first; equal scores are
// ordered by id so that results are deterministic. It never returns nil.
func toMatches(res *pc.QueryVectorsResponse) []agentsmcp.VectorMatch {
	out := []agentsmcp.VectorMatch{}
	if res == nil {
		return out
	}
	for _, m := range res.Matches {
		if m == nil || m.Vector == nil {
			continue
		}
		out = append(out, agentsmcp.VectorMatch{ID: m.Vector.Id, Score: m.Score, Metadata: structToMetadata(m.Vector.Metadata)})
	}
	slices.SortStableFunc(out, func(a, b agentsmcp.VectorMatch) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// toVectors converts and validates a whole upsert before anything is sent.
// A repeated id keeps its last values, as sequential upserts would; the
// order is that of first appearance.
func toVectors(vs []agentsmcp.Vector, dims int) ([]*pc.Vector, error) {
	out := make([]*pc.Vector, 0, len(vs))
	seen := make(map[string]int, len(vs))
	for _, v := range vs {
		if err := validateID(v.ID); err != nil {
			return nil, err
		}
		if err := validateValues(fmt.Sprintf("vector %q", v.ID), v.Values, dims); err != nil {
			return nil, err
		}
		values := slices.Clone(v.Values)
		pv := &pc.Vector{Id: v.ID, Values: &values, Metadata: metadataToStruct(v.Metadata)}
		if i, ok := seen[v.ID]; ok {
			out[i] = pv
			continue
		}
		seen[v.ID] = len(out)
		out = append(out, pv)
	}
	return out, nil
}

// vectorSize is the size of v inside an upsert request's protobuf
// encoding (Vector: id = 1, packed float values = 2, metadata = 3), framed
// as one element of UpsertRequest's repeated field 1.
func vectorSize(v *pc.Vector) int {
	n := 0
	if v.Id != "" {
		n += protowire.SizeTag(1) + protowire.SizeBytes(len(v.Id))
	}
	if v.Values != nil && len(*v.Values) > 0 {
		n += protowire.SizeTag(2) + protowire.SizeBytes(4*len(*v.Values))
	}
	if v.Metadata != nil {
		n += protowire.SizeTag(3) + protowire.SizeBytes(proto.Size(v.Metadata))
	}
	return protowire.SizeTag(1) + protowire.SizeBytes(n)
}

// upsertBatches cuts vs into requests of at most maxCount vectors and
// maxBytes of encoded vectors, keeping order. A vector larger than maxBytes
// by itself goes alone, for the server to judge.
func upsertBatches(vs []*pc.Vector, maxCount, maxBytes int) [][]*pc.Vector {
	var out [][]*pc.Vector
	start, size := 0, 0
	for i, v := range vs {
		s := vectorSize(v)
		if i > start && (i-start >= maxCount || size+s > maxBytes) {
			out = append(out, vs[start:i])
			start, size = i, 0
		}
		size += s
	}
	if start < len(vs) {
		out = append(out, vs[start:])
	}
	return out
}

// deleteIDs drops duplicates and ids Pinecone could not hold (which
// therefore cannot be in the index, and would make the server refuse the
// whole request), then cuts the rest into batches of at most n.
func deleteIDs(ids []string, n int) [][]string {
	keep := make([]string, 0, len(ids))
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if seen[id] || validateID(id) != nil {
			continue
		}
		seen[id] = true
		keep = append(keep, id)
	}
	var out [][]string
	for len(keep) > 0 {
		k := min(n, len(keep))
		out = append(out, keep[:k])
		keep = keep[k:]
	}
	return out
}

// classify maps an error of the Pinecone client to an application code.
// EUNAVAILABLE means "try again later": the data plane's gRPC codes for an
// overloaded, rate-limited, unreachable or slow server, and HTTP 429 and
// 5xx from the control plane, and network failures.
func classify(err error) string {
	var pe *pc.PineconeError
	if errors.As(err, &pe) {
		return classifyHTTP(pe.Code)
	}
	if st, ok := status.FromError(err); ok && st.Code() != codes.Unknown {
		switch st.Code() {
		case codes.Unavailable, codes.ResourceExhausted, codes.DeadlineExceeded,
			codes.Aborted, codes.Internal, codes.Canceled:
			return agentsmcp.EUNAVAILABLE
		case codes.InvalidArgument, codes.OutOfRange, codes.FailedPrecondition:
			return agentsmcp.EINVALID
		case codes.NotFound:
			return agentsmcp.ENOTFOUND
		case codes.Unauthenticated, codes.PermissionDenied:
			return agentsmcp.EUNAUTHORIZED
		case codes.AlreadyExists:
			return agentsmcp.ECONFLICT
		case codes.Unimplemented:
			return agentsmcp.ENOTIMPLEMENTED
		}
		return agentsmcp.EINTERNAL
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) {
		return agentsmcp.EUNAVAILABLE
	}
	return agentsmcp.EINTERNAL
}

func classifyHTTP(code int) string {
	switch {
	case code == http.StatusTooManyRequests || code == http.StatusRequestTimeout || code >= 500:
		return agentsmcp.EUNAVAILABLE
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return agentsmcp.EUNAUTHORIZED
	case code == http.StatusNotFound:
		return agentsmcp.ENOTFOUND
	case code == http.StatusConflict:
		return agentsmcp.ECONFLICT
	case code >= 400:
		return agentsmcp.EINVALID
	}
	return agentsmcp.EINTERNAL
}

// serverMessage is the part of err worth showing a caller: the gRPC status
// message, or the message of a control-plane error, cut to a few hundred
// bytes and with secret removed.
func serverMessage(err error, secret string) string {
	msg := err.Error()
	var pe *pc.PineconeError
	if errors.As(err, &pe) {
		// The client's message is JSON: {"status_code", "body", "message", …}.
		var m struct{ Message, Body string }
		if json.Unmarshal([]byte(pe.Error()), &m) == nil {
			msg = cmp.Or(m.Message, m.Body, msg)
		}
	} else if st, ok := status.FromError(err); ok {
		msg = st.Message()
	}
	return redact.QuoteMessage(redact.Message(msg, secret))
}
