package pineconetest_test

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/agents-mcp/agents-mcp/internal/pineconetest"
	pc "github.com/pinecone-io/go-pinecone/v5/pinecone"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"
)

const key = "pcsk_test_key"

func start(t *testing.T) (*pineconetest.Server, *pc.IndexConnection) {
	t.Helper()
	srv, err := pineconetest.Start(pineconetest.Options{APIKey: key, Dimension: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	client, err := pc.NewClient(pc.NewClientParams{ApiKey: key, Host: srv.ControlURL()})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := client.Index(pc.NewIndexConnParams{Host: srv.DataHost(), Namespace: "ns"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return srv, conn
}

func filter(t *testing.T, m map[string]any) *pc.MetadataFilter {
	t.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func vec(id string, values []float32, md map[string]any) *pc.Vector {
	s, _ := structpb.NewStruct(md)
	return &pc.Vector{Id: id, Values: &values, Metadata: s}
}

func queryIDs(t *testing.T, conn *pc.IndexConnection, f *pc.MetadataFilter) []string {
	t.Helper()
	res, err := conn.QueryByVectorValues(context.Background(), &pc.QueryByVectorValuesRequest{Vector: []float32{1, 0, 0}, TopK: 10, MetadataFilter: f})
	if err != nil {
		t.Fatalf("query %v: %v", f, err)
	}
	var ids []string
	for _, m := range res.Matches {
		ids = append(ids, m.Vector.Id)
	}
	return ids
}

// TestFiltersAndDeletes drives the data plane with go-pinecone's client:
// Pinecone's filter operators, ranking, and the three kinds of delete.
func TestFiltersAndDeletes(t *testing.T) {
	srv, conn := start(t)
	ctx := context.Background()
	_, err := conn.UpsertVectors(ctx, []*pc.Vector{
		vec("a", []float32{1, 0, 0}, map[string]any{"genre": "comedy", "year": 2019, "tags": []any{"x", "y"}}),
		vec("b", []float32{1, 1, 0}, map[string]any{"genre": "drama", "year": 2021}),
		vec("c", []float32{0, 1, 0}, map[string]any{"genre": "comedy", "year": 2023, "seen": true}),
		vec("d", []float32{0, 0, 1}, nil),
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		f    map[string]any
		want []string
	}{
		{nil, []string{"a", "b", "c", "d"}},
		{map[string]any{"genre": "comedy"}, []string{"a", "c"}},
		{map[string]any{"genre": map[string]any{"$ne": "comedy"}}, []string{"b", "d"}},
		{map[string]any{"year": map[string]any{"$gte": 2021}}, []string{"b", "c"}},
		{map[string]any{"year": map[string]any{"$lt": 2021}}, []string{"a"}},
		{map[string]any{"genre": map[string]any{"$in": []any{"drama", "horror"}}}, []string{"b"}},
		{map[string]any{"genre": map[string]any{"$nin": []any{"drama"}}}, []string{"a", "c", "d"}},
		{map[string]any{"seen": map[string]any{"$exists": true}}, []string{"c"}},
		{map[string]any{"tags": map[string]any{"$eq": "y"}}, []string{"a"}},
		{map[string]any{"$or": []any{map[string]any{"genre": "drama"}, map[string]any{"seen": true}}}, []string{"b", "c"}},
		{map[string]any{"$and": []any{map[string]any{"genre": "comedy"}, map[string]any{"year": map[string]any{"$gt": 2020}}}}, []string{"c"}},
	} {
		var f *pc.MetadataFilter
		if tt.f != nil {
			f = filter(t, tt.f)
		}
		got := queryIDs(t, conn, f)
		want := tt.want
		// Ranked by cosine to (1,0,0): a, b, then c and d (both 0) in descending id order.
		if f == nil && !slices.Equal(got, []string{"a", "b", "d", "c"}) {
			t.Errorf("ranking %v, want [a b d c]", got)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("filter %v: %v, want %v", tt.f, got, want)
		}
	}
	_, err = conn.QueryByVectorValues(ctx, &pc.QueryByVectorValuesRequest{Vector: []float32{1, 0, 0}, TopK: 1, MetadataFilter: filter(t, map[string]any{"year": map[string]any{"$regex": "x"}})})
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("unknown operator: %v, want INVALID_ARGUMENT", err)
	}

	if err := conn.DeleteVectorsByFilter(ctx, filter(t, map[string]any{"genre": "comedy"})); err != nil {
		t.Fatal(err)
	}
	if got := queryIDs(t, conn, nil); !slices.Equal(got, []string{"b", "d"}) {
		t.Errorf("after delete by filter: %v", got)
	}
	if err := conn.DeleteAllVectorsInNamespace(ctx); err != nil {
		t.Fatal(err)
	}
	if got := queryIDs(t, conn, nil); len(got) != 0 {
		t.Errorf("after delete all: %v", got)
	}
	if err := conn.DeleteVectorsById(ctx, []string{"a"}); status.Code(err) != codes.NotFound {
		t.Errorf("delete in a namespace that no longer exists: %v, want NOT_FOUND", err)
	}
	if _, err := conn.UpsertVectors(ctx, []*pc.Vector{vec("z", []float32{0, 0, 0}, nil)}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("zero vector in a cosine index: %v, want INVALID_ARGUMENT", err)
	}
	if _, err := conn.UpsertVectors(ctx, []*pc.Vector{vec("z", []float32{1, 0}, nil)}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("wrong dimension: %v, want INVALID_ARGUMENT", err)
	}
	if len(srv.ProtocolErrors()) != 0 {
		t.Error(srv.ProtocolErrors())
	}
}

// TestControlPlaneValidatesRequests: a request that leaves Pinecone's
// document (here, without the required X-Pinecone-Api-Version header) is
// refused and recorded, and go-pinecone's own requests are not.
func TestControlPlaneValidatesRequests(t *testing.T) {
	srv, _ := start(t)
	req, _ := http.NewRequest(http.MethodGet, srv.ControlURL()+"/indexes/agents-mcp", nil)
	req.Header.Set("Api-Key", key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusBadRequest || len(srv.ProtocolErrors()) != 1 {
		t.Errorf("request without the version header: %d, protocol errors %v; want 400 and one", res.StatusCode, srv.ProtocolErrors())
	}
	client, err := pc.NewClient(pc.NewClientParams{ApiKey: key, Host: srv.ControlURL()})
	if err != nil {
		t.Fatal(err)
	}
	idx, err := client.DescribeIndex(context.Background(), "agents-mcp")
	if err != nil || idx.Dimension == nil || *idx.Dimension != 3 || idx.Host != srv.DataHost() {
		t.Fatalf("describe: %+v, %v", idx, err)
	}
	if _, err := client.ListIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.ProtocolErrors()); n != 1 {
		t.Errorf("go-pinecone's requests left the document: %v", srv.ProtocolErrors()[1:])
	}
}

func TestListensOnLoopbackOnly(t *testing.T) {
	if _, err := pineconetest.Start(pineconetest.Options{APIKey: key, Dimension: 3, DataAddr: "0.0.0.0:0"}); err == nil {
		t.Error("Start listened on every interface")
	}
}
