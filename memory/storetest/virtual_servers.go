package storetest

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

func init() {
	suite["VirtualServerRoundTrip"] = testVirtualServerRoundTrip
	suite["VirtualServerConflictAndUnknown"] = testVirtualServerConflictAndUnknown
	suite["VirtualServerReplace"] = testVirtualServerReplace
	suite["VirtualServerInvalid"] = testVirtualServerInvalid
	suite["VirtualServerListSorted"] = testVirtualServerListSorted
}

// virtualStore returns the store's VirtualServerService, failing t when
// the store under test did not provide one.
func virtualStore(t *testing.T, s Services) agentsmcp.VirtualServerService {
	t.Helper()
	if s.VirtualServers == nil {
		t.Fatal("Services.VirtualServers is nil: the store must provide a VirtualServerService")
	}
	return s.VirtualServers
}

func sampleVirtualServer(name string) *agentsmcp.VirtualServer {
	ev, gh := "ev_", "gh_"
	return &agentsmcp.VirtualServer{
		Name: name, Title: "Dev tools", Description: "what a developer needs", Version: "1.2.0",
		CatalogMode: agentsmcp.CatalogFull,
		Tools: []agentsmcp.VirtualSelection{
			{Upstream: "github", Names: []string{"github__create_*"}, AliasPrefix: &gh},
			{Upstream: "everything", AliasPrefix: &ev, Tags: []string{"dev"}},
			{Names: []string{"search_tools"}},
		},
		Resources:    []agentsmcp.VirtualSelection{{Upstream: "everything"}},
		Prompts:      []agentsmcp.VirtualSelection{{Names: []string{"everything__*"}}},
		Rename:       map[string]string{"github__list_issues": "issues"},
		Descriptions: map[string]string{"github__list_issues": "List the issues — ünïcode kept"},
		CreatedBy:    "key:abc",
	}
}

func listVirtual(t *testing.T, svc agentsmcp.VirtualServerService) []*agentsmcp.VirtualServer {
	t.Helper()
	items, err := svc.ListVirtualServers(t.Context())
	if err != nil {
		t.Fatalf("ListVirtualServers: %v", err)
	}
	return items
}

// testVirtualServerRoundTrip: every field comes back as stored, with the
// Revision and CreatedAt the store assigned.
func testVirtualServerRoundTrip(t *testing.T, s Services) {
	svc := virtualStore(t, s)
	v := sampleVirtualServer("dev")
	if err := svc.CreateVirtualServer(t.Context(), v); err != nil {
		t.Fatalf("CreateVirtualServer: %v", err)
	}
	if v.Revision == "" || v.CreatedAt.IsZero() {
		t.Fatalf("Create assigned revision %q, created %v", v.Revision, v.CreatedAt)
	}
	if since := time.Since(v.CreatedAt); since < -time.Minute || since > time.Minute {
		t.Errorf("CreatedAt %v is not now", v.CreatedAt)
	}
	items := listVirtual(t, svc)
	if len(items) != 1 {
		t.Fatalf("list: %d items, want 1", len(items))
	}
	got := items[0]
	if !got.CreatedAt.Equal(v.CreatedAt) || got.CreatedAt.Location() != time.UTC {
		t.Errorf("CreatedAt = %v, want %v in UTC", got.CreatedAt, v.CreatedAt)
	}
	want := *v
	want.CreatedAt, got.CreatedAt = time.Time{}, time.Time{}
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("round trip:\n got %+v\nwant %+v", *got, want)
	}
}

// testVirtualServerConflictAndUnknown: a taken name is ECONFLICT; replacing
// or deleting an unknown one is ENOTFOUND; a deleted one is gone.
func testVirtualServerConflictAndUnknown(t *testing.T, s Services) {
	svc, ctx := virtualStore(t, s), t.Context()
	if err := svc.CreateVirtualServer(ctx, sampleVirtualServer("dev")); err != nil {
		t.Fatal(err)
	}
	if err := svc.CreateVirtualServer(ctx, sampleVirtualServer("dev")); agentsmcp.ErrorCode(err) != agentsmcp.ECONFLICT {
		t.Errorf("second create: %v, want ECONFLICT", err)
	}
	if err := svc.ReplaceVirtualServer(ctx, sampleVirtualServer("nope")); agentsmcp.ErrorCode(err) != agentsmcp.ENOTFOUND {
		t.Errorf("replace unknown: %v, want ENOTFOUND", err)
	}
	if err := svc.DeleteVirtualServer(ctx, "nope"); agentsmcp.ErrorCode(err) != agentsmcp.ENOTFOUND {
		t.Errorf("delete unknown: %v, want ENOTFOUND", err)
	}
	if err := svc.DeleteVirtualServer(ctx, "dev"); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if items := listVirtual(t, svc); len(items) != 0 {
		t.Errorf("after delete: %d items", len(items))
	}
	if err := svc.DeleteVirtualServer(ctx, "dev"); agentsmcp.ErrorCode(err) != agentsmcp.ENOTFOUND {
		t.Errorf("second delete: %v, want ENOTFOUND", err)
	}
}

// testVirtualServerReplace: a replace stores the new definition under a
// new Revision and keeps CreatedBy and CreatedAt.
func testVirtualServerReplace(t *testing.T, s Services) {
	svc, ctx := virtualStore(t, s), t.Context()
	v := sampleVirtualServer("dev")
	if err := svc.CreateVirtualServer(ctx, v); err != nil {
		t.Fatal(err)
	}
	w := &agentsmcp.VirtualServer{Name: "dev", Description: "smaller", Tools: []agentsmcp.VirtualSelection{{Upstream: "local"}}, CreatedBy: "key:other"}
	if err := svc.ReplaceVirtualServer(ctx, w); err != nil {
		t.Fatalf("ReplaceVirtualServer: %v", err)
	}
	if w.Revision == "" || w.Revision == v.Revision {
		t.Errorf("replace revision %q, create's %q: want a new one", w.Revision, v.Revision)
	}
	got := listVirtual(t, svc)[0]
	if got.Description != "smaller" || len(got.Tools) != 1 || got.Tools[0].Upstream != "local" || got.Rename != nil || got.Title != "" {
		t.Errorf("after replace: %+v", got)
	}
	if got.Revision != w.Revision || got.CreatedBy != v.CreatedBy || !got.CreatedAt.Equal(v.CreatedAt) {
		t.Errorf("after replace: revision %q created by %q at %v, want %q by %q at %v", got.Revision, got.CreatedBy, got.CreatedAt, w.Revision, v.CreatedBy, v.CreatedAt)
	}
}

// testVirtualServerInvalid: a broken invariant is EINVALID and stores
// nothing.
func testVirtualServerInvalid(t *testing.T, s Services) {
	svc, ctx := virtualStore(t, s), t.Context()
	a, b := "a_", "a_b"
	for _, v := range []*agentsmcp.VirtualServer{
		{Name: ""},
		{Name: "has/slash"},
		{Name: "dev", CatalogMode: "lazy"},
		{Name: "dev", Tools: []agentsmcp.VirtualSelection{{Names: []string{"[oops"}}}},
		{Name: "dev", Tools: []agentsmcp.VirtualSelection{{AliasPrefix: &a}}},
		{Name: "dev", Tools: []agentsmcp.VirtualSelection{{Upstream: "x", AliasPrefix: &a}, {Upstream: "y", AliasPrefix: &b}}},
		{Name: "dev", Rename: map[string]string{"x__a": "same", "y__b": "same"}},
		{Name: "dev", Rename: map[string]string{"x__a": "has space"}},
	} {
		if err := svc.CreateVirtualServer(ctx, v); agentsmcp.ErrorCode(err) != agentsmcp.EINVALID {
			t.Errorf("create %+v: %v, want EINVALID", v, err)
		}
	}
	if err := svc.CreateVirtualServer(ctx, nil); agentsmcp.ErrorCode(err) != agentsmcp.EINVALID {
		t.Errorf("create nil: %v, want EINVALID", err)
	}
	if items := listVirtual(t, svc); len(items) != 0 {
		t.Errorf("invalid creates stored %d items", len(items))
	}
}

// testVirtualServerListSorted: the list is in byte order of name, whatever
// the order of creation.
func testVirtualServerListSorted(t *testing.T, s Services) {
	svc, ctx := virtualStore(t, s), t.Context()
	for _, name := range []string{"zeta", "Alpha", "beta", "a.b", "a-c"} {
		if err := svc.CreateVirtualServer(ctx, &agentsmcp.VirtualServer{Name: name}); err != nil {
			t.Fatalf("create %q: %v", name, err)
		}
	}
	var got []string
	for _, v := range listVirtual(t, svc) {
		got = append(got, v.Name)
	}
	if want := []string{"Alpha", "a-c", "a.b", "beta", "zeta"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("list order %v, want %v", got, want)
	}
}
