package pinecone

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"strings"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	pc "github.com/pinecone-io/go-pinecone/v5/pinecone"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/structpb"
)

// canonical renders a struct as JSON with sorted keys, to compare with a
// literal.
func canonical(t *testing.T, s *structpb.Struct) string {
	t.Helper()
	if s == nil {
		return "null"
	}
	b, err := json.Marshal(s.AsMap())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestValidateID(t *testing.T) {
	tests := []struct {
		id   string
		ok   bool
		want string // part of the message
	}{
		{"learning-01J9", true, ""},
		{"a", true, ""},
		{strings.Repeat("x", 512), true, ""},
		{"with space and ~!@#$%^&*()", true, ""},
		{"", false, "required"},
		{strings.Repeat("x", 513), false, "513 bytes"},
		{"caf\u00e9", false, "printable ASCII"},
		{"tab\there", false, "0x09"},
		{"del\x7f", false, "0x7f"},
	}
	for _, tt := range tests {
		err := validateID(tt.id)
		if tt.ok {
			if err != nil {
				t.Errorf("validateID(%.20q) = %v, want nil", tt.id, err)
			}
			continue
		}
		if agentsmcp.ErrorCode(err) != agentsmcp.EINVALID || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("validateID(%.20q) = %v, want EINVALID mentioning %q", tt.id, err, tt.want)
		}
	}
}

func TestValidateValues(t *testing.T) {
	nan := float32(0)
	nan = nan / nan
	tests := []struct {
		name   string
		values []float32
		want   string // "" for valid
	}{
		{"ok", []float32{0, 1, 0}, ""},
		{"negative ok", []float32{-1, 0, 0}, ""},
		{"short", []float32{1, 0}, "has 2 dimensions; the index has 3"},
		{"long", []float32{1, 0, 0, 0}, "has 4 dimensions"},
		{"nil", nil, "has 0 dimensions"},
		{"zero", []float32{0, 0, 0}, "zero vector"},
		{"nan", []float32{1, nan, 0}, "NaN"},
	}
	for _, tt := range tests {
		err := validateValues("v", tt.values, 3)
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		if agentsmcp.ErrorCode(err) != agentsmcp.EINVALID || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want EINVALID with %q", tt.name, err, tt.want)
		}
	}
}

func TestMetadataRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		in   map[string]string
		json string
		back map[string]string
	}{
		{"nil", nil, "null", nil},
		{"empty", map[string]string{}, "null", nil},
		{"only empty values", map[string]string{"a": ""}, "null", nil},
		{"strings", map[string]string{"kind": "learning", "tool": "fs__read"}, `{"kind":"learning","tool":"fs__read"}`, map[string]string{"kind": "learning", "tool": "fs__read"}},
		{"empty dropped", map[string]string{"kind": "x", "note": ""}, `{"kind":"x"}`, map[string]string{"kind": "x"}},
		{"unicode", map[string]string{"t": "über ✓"}, `{"t":"über ✓"}`, map[string]string{"t": "über ✓"}},
	}
	for _, tt := range tests {
		s := metadataToStruct(tt.in)
		if got := canonical(t, s); got != tt.json {
			t.Errorf("%s: metadataToStruct = %s, want %s", tt.name, got, tt.json)
		}
		if got := structToMetadata(s); !reflect.DeepEqual(got, tt.back) {
			t.Errorf("%s: structToMetadata = %v, want %v", tt.name, got, tt.back)
		}
	}
}

func TestStructToMetadataForeignKinds(t *testing.T) {
	s, err := structpb.NewStruct(map[string]any{
		"s": "x", "n": 3.0, "f": 0.25, "b": true, "null": nil,
		"list": []any{"a", "b"}, "obj": map[string]any{"k": "v"}, "empty": "",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"s": "x", "n": "3", "f": "0.25", "b": "true"}
	if got := structToMetadata(s); !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got := structToMetadata(&structpb.Struct{}); got != nil {
		t.Errorf("no fields: got %v, want nil", got)
	}
}

func TestFilterToStruct(t *testing.T) {
	tests := []struct {
		name   string
		filter map[string]string
		json   string
	}{
		{"nil", nil, "null"},
		{"empty", map[string]string{}, "null"},
		{"one key", map[string]string{"kind": "learning"}, `{"kind":{"$eq":"learning"}}`},
		{"two keys sorted", map[string]string{"tool": "fs", "kind": "learning"},
			`{"$and":[{"kind":{"$eq":"learning"}},{"tool":{"$eq":"fs"}}]}`},
		{"three keys", map[string]string{"c": "3", "a": "1", "b": "2"},
			`{"$and":[{"a":{"$eq":"1"}},{"b":{"$eq":"2"}},{"c":{"$eq":"3"}}]}`},
		{"empty value is absent", map[string]string{"note": ""}, `{"note":{"$exists":false}}`},
		{"mixed", map[string]string{"note": "", "kind": "x"},
			`{"$and":[{"kind":{"$eq":"x"}},{"note":{"$exists":false}}]}`},
	}
	for _, tt := range tests {
		if got := canonical(t, filterToStruct(tt.filter)); got != tt.json {
			t.Errorf("%s: got %s, want %s", tt.name, got, tt.json)
		}
	}
	// Deterministic: the same filter is byte-for-byte the same request.
	f := map[string]string{"a": "1", "b": "2", "c": "3", "d": "4", "e": "5"}
	first, _ := proto.MarshalOptions{Deterministic: true}.Marshal(filterToStruct(f))
	for range 20 {
		again, _ := proto.MarshalOptions{Deterministic: true}.Marshal(filterToStruct(f))
		if string(again) != string(first) {
			t.Fatal("filter encoding differs between calls")
		}
	}
}

func scored(id string, score float32, meta map[string]string) *pc.ScoredVector {
	return &pc.ScoredVector{Vector: &pc.Vector{Id: id, Metadata: metadataToStruct(meta)}, Score: score}
}

func TestToMatches(t *testing.T) {
	tests := []struct {
		name string
		res  *pc.QueryVectorsResponse
		want []agentsmcp.VectorMatch
	}{
		{"nil response", nil, []agentsmcp.VectorMatch{}},
		{"no matches", &pc.QueryVectorsResponse{}, []agentsmcp.VectorMatch{}},
		{"sorted desc, ties by id, nils skipped", &pc.QueryVectorsResponse{Matches: []*pc.ScoredVector{
			scored("b", 0.5, nil),
			nil,
			scored("c", 0.9, map[string]string{"k": "v"}),
			{Score: 1},
			scored("a", 0.5, nil),
			scored("d", -0.2, nil),
		}}, []agentsmcp.VectorMatch{
			{ID: "c", Score: 0.9, Metadata: map[string]string{"k": "v"}},
			{ID: "a", Score: 0.5},
			{ID: "b", Score: 0.5},
			{ID: "d", Score: -0.2},
		}},
	}
	for _, tt := range tests {
		got := toMatches(tt.res)
		if got == nil {
			t.Errorf("%s: nil result", tt.name)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.name, got, tt.want)
		}
	}
}

func TestToVectors(t *testing.T) {
	in := []agentsmcp.Vector{
		{ID: "a", Values: []float32{1, 0}, Metadata: map[string]string{"k": "1"}},
		{ID: "b", Values: []float32{0, 1}},
		{ID: "a", Values: []float32{0.5, 0.5}, Metadata: map[string]string{"k": "2"}},
	}
	got, err := toVectors(in, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Id != "a" || got[1].Id != "b" {
		t.Fatalf("ids %v, want [a b]", ids(got))
	}
	if (*got[0].Values)[0] != 0.5 || got[0].Metadata.Fields["k"].GetStringValue() != "2" {
		t.Errorf("repeated id kept %v %v, want the last values", *got[0].Values, got[0].Metadata)
	}
	in[1].Values[0] = 9
	if (*got[1].Values)[0] != 0 {
		t.Error("values alias the caller's slice")
	}

	for _, bad := range [][]agentsmcp.Vector{
		{{ID: "ok", Values: []float32{1, 0}}, {ID: "short", Values: []float32{1}}},
		{{ID: "ok", Values: []float32{1, 0}}, {ID: "", Values: []float32{1, 0}}},
		{{ID: "ok", Values: []float32{1, 0}}, {ID: "zero", Values: []float32{0, 0}}},
	} {
		if vs, err := toVectors(bad, 2); agentsmcp.ErrorCode(err) != agentsmcp.EINVALID || vs != nil {
			t.Errorf("toVectors(%v) = %v, %v; want nil, EINVALID", bad, vs, err)
		}
	}
}

func ids(vs []*pc.Vector) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Id
	}
	return out
}

func makeVectors(n, dims int, meta map[string]string) []*pc.Vector {
	out := make([]*pc.Vector, n)
	for i := range out {
		values := make([]float32, dims)
		values[0] = 1
		out[i] = &pc.Vector{Id: fmt.Sprintf("v%04d", i), Values: &values, Metadata: metadataToStruct(meta)}
	}
	return out
}

// upsertRequestType describes Pinecone's UpsertRequest and Vector messages
// (field numbers from the client's generated code), so the size estimate
// can be checked against a real protobuf encoding.
func upsertRequestType(t *testing.T) protoreflect.MessageType {
	t.Helper()
	opt := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()
	rep := descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
	fd := &descriptorpb.FileDescriptorProto{
		Name:       proto.String("sizecheck.proto"),
		Package:    proto.String("sizecheck"),
		Syntax:     proto.String("proto3"),
		Dependency: []string{"google/protobuf/struct.proto"},
		MessageType: []*descriptorpb.DescriptorProto{
			{Name: proto.String("Vector"), Field: []*descriptorpb.FieldDescriptorProto{
				{Name: proto.String("id"), Number: proto.Int32(1), Label: opt, Type: descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum()},
				{Name: proto.String("values"), Number: proto.Int32(2), Label: rep, Type: descriptorpb.FieldDescriptorProto_TYPE_FLOAT.Enum()},
				{Name: proto.String("metadata"), Number: proto.Int32(3), Label: opt, Type: descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum(), TypeName: proto.String(".google.protobuf.Struct")},
			}},
			{Name: proto.String("UpsertRequest"), Field: []*descriptorpb.FieldDescriptorProto{
				{Name: proto.String("vectors"), Number: proto.Int32(1), Label: rep, Type: descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum(), TypeName: proto.String(".sizecheck.Vector")},
			}},
		},
	}
	file, err := protodesc.NewFile(fd, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	return dynamicpb.NewMessageType(file.Messages().ByName("UpsertRequest"))
}

func TestVectorSizeMatchesProtobuf(t *testing.T) {
	mt := upsertRequestType(t)
	vf := mt.Descriptor().Fields().ByName("vectors")
	vt := dynamicpb.NewMessageType(vf.Message())
	for _, tt := range []struct {
		name string
		vs   []*pc.Vector
	}{
		{"no metadata", makeVectors(3, 8, nil)},
		{"metadata", makeVectors(2, 1536, map[string]string{"kind": "learning", "text": strings.Repeat("x", 300)})},
		{"big", makeVectors(1, 20000, map[string]string{"k": strings.Repeat("é", 5000)})},
	} {
		req := mt.New()
		list := req.Mutable(vf).List()
		want := 0
		for _, v := range tt.vs {
			m := vt.New()
			fs := m.Descriptor().Fields()
			m.Set(fs.ByName("id"), protoreflect.ValueOfString(v.Id))
			vals := m.Mutable(fs.ByName("values")).List()
			for _, x := range *v.Values {
				vals.Append(protoreflect.ValueOfFloat32(x))
			}
			if v.Metadata != nil {
				m.Set(fs.ByName("metadata"), protoreflect.ValueOfMessage(v.Metadata.ProtoReflect()))
			}
			list.Append(protoreflect.ValueOfMessage(m))
			want += vectorSize(v)
		}
		if got := proto.Size(req.Interface()); got != want {
			t.Errorf("%s: encoded request is %d bytes, estimate %d", tt.name, got, want)
		}
	}
}

func TestUpsertBatches(t *testing.T) {
	sizes := func(bs [][]*pc.Vector) []int {
		out := make([]int, len(bs))
		for i, b := range bs {
			out[i] = len(b)
		}
		return out
	}
	one := vectorSize(makeVectors(1, 1536, nil)[0])
	tests := []struct {
		name     string
		vs       []*pc.Vector
		maxCount int
		maxBytes int
		want     []int
	}{
		{"none", nil, 100, upsertBatchBytes, []int{}},
		{"under both", makeVectors(5, 8, nil), 100, upsertBatchBytes, []int{5}},
		{"by count", makeVectors(250, 8, nil), 100, upsertBatchBytes, []int{100, 100, 50}},
		{"exact count", makeVectors(200, 8, nil), 100, upsertBatchBytes, []int{100, 100}},
		{"by bytes", makeVectors(10, 1536, nil), 100, 3*one + 1, []int{3, 3, 3, 1}},
		{"bytes exact", makeVectors(6, 1536, nil), 100, 3 * one, []int{3, 3}},
		{"oversized alone", makeVectors(3, 1536, nil), 100, one - 1, []int{1, 1, 1}},
		// 3072 dims are 12 KB each: the count limit binds first at 100.
		{"real limits 3072", makeVectors(230, 3072, nil), upsertBatchCount, upsertBatchBytes, []int{100, 100, 30}},
		// 20000 dims are 80 KB each: the size limit binds at 18.
		{"real limits 20000", makeVectors(40, 20000, nil), upsertBatchCount, upsertBatchBytes, []int{18, 18, 4}},
	}
	for _, tt := range tests {
		bs := upsertBatches(tt.vs, tt.maxCount, tt.maxBytes)
		if got := sizes(bs); !reflect.DeepEqual(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
			t.Errorf("%s: batch sizes %v, want %v", tt.name, got, tt.want)
		}
		// Order is kept and nothing is lost.
		var flat []*pc.Vector
		for _, b := range bs {
			total := 0
			for _, v := range b {
				total += vectorSize(v)
			}
			if len(b) > 1 && total > tt.maxBytes {
				t.Errorf("%s: batch of %d is %d bytes > %d", tt.name, len(b), total, tt.maxBytes)
			}
			flat = append(flat, b...)
		}
		if !reflect.DeepEqual(ids(flat), ids(tt.vs)) {
			t.Errorf("%s: order or content changed", tt.name)
		}
	}
}

func TestDeleteIDs(t *testing.T) {
	many := make([]string, 2500)
	for i := range many {
		many[i] = fmt.Sprintf("id-%d", i)
	}
	tests := []struct {
		name string
		ids  []string
		n    int
		want [][]string
	}{
		{"none", nil, 1000, nil},
		{"dedupe and drop invalid", []string{"a", "", "b", "a", "caf\u00e9", strings.Repeat("x", 600), "c"}, 1000, [][]string{{"a", "b", "c"}}},
		{"only invalid", []string{"", "é"}, 1000, nil},
		{"batches", []string{"a", "b", "c", "d", "e"}, 2, [][]string{{"a", "b"}, {"c", "d"}, {"e"}}},
	}
	for _, tt := range tests {
		if got := deleteIDs(tt.ids, tt.n); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
	bs := deleteIDs(many, maxDeleteBatch)
	if len(bs) != 3 || len(bs[0]) != 1000 || len(bs[1]) != 1000 || len(bs[2]) != 500 || bs[2][499] != "id-2499" {
		t.Errorf("2500 ids: batches of %d, %d, …", len(bs[0]), len(bs[1]))
	}
}

type fakeNetErr struct{}

func (fakeNetErr) Error() string   { return "dial tcp: i/o timeout" }
func (fakeNetErr) Timeout() bool   { return true }
func (fakeNetErr) Temporary() bool { return true }

var _ net.Error = fakeNetErr{}

func TestClassify(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"grpc unavailable", status.Error(codes.Unavailable, "overloaded"), agentsmcp.EUNAVAILABLE},
		{"grpc resource exhausted", status.Error(codes.ResourceExhausted, "rate limit"), agentsmcp.EUNAVAILABLE},
		{"grpc deadline", status.Error(codes.DeadlineExceeded, "slow"), agentsmcp.EUNAVAILABLE},
		{"grpc internal", status.Error(codes.Internal, "oops"), agentsmcp.EUNAVAILABLE},
		{"grpc aborted", status.Error(codes.Aborted, "retry"), agentsmcp.EUNAVAILABLE},
		{"grpc invalid", status.Error(codes.InvalidArgument, "dimension 3 != 4"), agentsmcp.EINVALID},
		{"grpc not found", status.Error(codes.NotFound, "namespace not found"), agentsmcp.ENOTFOUND},
		{"grpc unauthenticated", status.Error(codes.Unauthenticated, "bad key"), agentsmcp.EUNAUTHORIZED},
		{"grpc permission", status.Error(codes.PermissionDenied, "no"), agentsmcp.EUNAUTHORIZED},
		{"grpc unknown", status.Error(codes.Unknown, "?"), agentsmcp.EINTERNAL},
		{"wrapped grpc", fmt.Errorf("upsert: %w", status.Error(codes.Unavailable, "x")), agentsmcp.EUNAVAILABLE},
		{"http 429", &pc.PineconeError{Code: 429, Msg: errors.New("slow down")}, agentsmcp.EUNAVAILABLE},
		{"http 500", &pc.PineconeError{Code: 500, Msg: errors.New("x")}, agentsmcp.EUNAVAILABLE},
		{"http 503", &pc.PineconeError{Code: 503, Msg: errors.New("x")}, agentsmcp.EUNAVAILABLE},
		{"http 400", &pc.PineconeError{Code: 400, Msg: errors.New("x")}, agentsmcp.EINVALID},
		{"http 401", &pc.PineconeError{Code: 401, Msg: errors.New("x")}, agentsmcp.EUNAUTHORIZED},
		{"http 403", &pc.PineconeError{Code: 403, Msg: errors.New("x")}, agentsmcp.EUNAUTHORIZED},
		{"http 404", &pc.PineconeError{Code: 404, Msg: errors.New("x")}, agentsmcp.ENOTFOUND},
		{"context deadline", fmt.Errorf("Get …: %w", context.DeadlineExceeded), agentsmcp.EUNAVAILABLE},
		{"net error", &net.OpError{Op: "dial", Err: fakeNetErr{}}, agentsmcp.EUNAVAILABLE},
		{"unexpected eof", io.ErrUnexpectedEOF, agentsmcp.EUNAVAILABLE},
		{"other", errors.New("failed to decode"), agentsmcp.EINTERNAL},
	}
	for _, tt := range tests {
		if got := classify(tt.err); got != tt.want {
			t.Errorf("%s: classify = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestWrapRemote(t *testing.T) {
	const key = "pcsk_SECRET_123"
	tests := []struct {
		name     string
		err      error
		code     string
		inMsg    string // in ErrorMessage, which callers see
		notInMsg string
	}{
		{"unavailable", status.Error(codes.Unavailable, "backend overloaded"), agentsmcp.EUNAVAILABLE, "try again later", "overloaded"},
		{"invalid quotes server", status.Error(codes.InvalidArgument, "Vector dimension 3 does not match the dimension of the index 4"), agentsmcp.EINVALID, "does not match the dimension of the index 4", ""},
		{"unauthorized", status.Error(codes.Unauthenticated, "Invalid API key "+key), agentsmcp.EUNAUTHORIZED, "refused the API key", key},
		{"key echoed by server", status.Error(codes.InvalidArgument, "bad request from "+key), agentsmcp.EINVALID, "[redacted]", key},
		{"control plane json", &pc.PineconeError{Code: 404, Msg: errors.New(`{"status_code":404,"body":"{}","error_code":"NOT_FOUND","message":"failed to describe index: Resource idx not found"}`)},
			agentsmcp.ENOTFOUND, "Resource idx not found", "status_code"},
		{"internal keeps chain", errors.New("decode " + key), agentsmcp.EINTERNAL, "", key},
	}
	for _, tt := range tests {
		err := wrapRemote(tt.err, key, "upsert into %q", "ns")
		if got := agentsmcp.ErrorCode(err); got != tt.code {
			t.Errorf("%s: code %q, want %q (%v)", tt.name, got, tt.code, err)
		}
		msg := agentsmcp.ErrorMessage(err)
		if !strings.Contains(msg, tt.inMsg) {
			t.Errorf("%s: message %q lacks %q", tt.name, msg, tt.inMsg)
		}
		if tt.notInMsg != "" && strings.Contains(msg, tt.notInMsg) {
			t.Errorf("%s: message %q shows %q", tt.name, msg, tt.notInMsg)
		}
		if strings.Contains(err.Error(), key) {
			t.Errorf("%s: error text holds the API key: %v", tt.name, err)
		}
	}
	// Without a key in the text, the cause stays in the chain for logs.
	cause := status.Error(codes.Unavailable, "x")
	if err := wrapRemote(cause, key, "q"); !errors.Is(err, cause) {
		t.Errorf("cause lost: %v", err)
	}
}
