package vectors

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"testing/iotest"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// persistData is 900 vectors (800 for the fixture, 100 more) and 40
// queries.
func persistData() ([]agentsmcp.Vector, [][]float32) { return dataset(31, 900, 40, 16, 12, 0) }

// persistFixture is a small index with two namespaces, metadata and
// tombstones.
func persistFixture(t *testing.T) *HNSW {
	t.Helper()
	ctx := context.Background()
	const dims = 16
	h := NewHNSW(dims, HNSWOptions{Seed: 21, M: 8, EfSearch: 40, CompactRatio: 0.5, ExactThreshold: 100})
	vs, _ := persistData()
	vs = vs[:800]
	if err := h.Upsert(ctx, "tools", vs); err != nil {
		t.Fatal(err)
	}
	if err := h.Upsert(ctx, "learnings", vs[:50]); err != nil {
		t.Fatal(err)
	}
	var del []string
	for i := 0; i < len(vs); i += 7 {
		del = append(del, vs[i].ID)
	}
	if err := h.Delete(ctx, "tools", del); err != nil {
		t.Fatal(err)
	}
	h.Upsert(ctx, "empty", []agentsmcp.Vector{{ID: "gone", Values: vs[0].Values}})
	h.Delete(ctx, "empty", []string{"gone"})
	return h
}

func encode(t *testing.T, h *HNSW) []byte {
	t.Helper()
	var b bytes.Buffer
	n, err := h.WriteTo(&b)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(b.Len()) {
		t.Fatalf("WriteTo reported %d bytes, wrote %d", n, b.Len())
	}
	return b.Bytes()
}

func TestPersistRoundTrip(t *testing.T) {
	ctx := context.Background()
	h := persistFixture(t)
	path := filepath.Join(t.TempDir(), "index.hnsw")
	if err := h.Save(path); err != nil {
		t.Fatal(err)
	}
	if err := h.Save(path); err != nil { // overwriting works too
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("temporary files left: %v", entries)
	}
	h2, err := LoadHNSW(path)
	if err != nil {
		t.Fatal(err)
	}
	if h2.Options() != h.Options() || h2.dims != h.dims {
		t.Fatalf("options %+v, want %+v", h2.Options(), h.Options())
	}
	for _, ns := range []string{"tools", "learnings", "empty", "none"} {
		if h2.Len(ns) != h.Len(ns) {
			t.Fatalf("%s: len %d, want %d", ns, h2.Len(ns), h.Len(ns))
		}
	}
	vs, qs := persistData()
	for i, q := range qs {
		for _, filter := range []map[string]string{nil, {"kind": "b"}, {"shard": strconv.Itoa(i % 50)}} {
			for _, ns := range []string{"tools", "learnings"} {
				want := mustQuery(t, h, ns, agentsmcp.VectorQuery{Values: q, TopK: 10, Filter: filter})
				got := mustQuery(t, h2, ns, agentsmcp.VectorQuery{Values: q, TopK: 10, Filter: filter})
				if len(got) != len(want) {
					t.Fatalf("%s %v: %d results, want %d", ns, filter, len(got), len(want))
				}
				for j := range got {
					if got[j].ID != want[j].ID || got[j].Score != want[j].Score || got[j].Metadata["shard"] != want[j].Metadata["shard"] {
						t.Fatalf("%s %v: result %d %+v, want %+v", ns, filter, j, got[j], want[j])
					}
				}
			}
		}
	}
	// The loaded index carries on exactly as the original would.
	more := vs[800:]
	for _, x := range []*HNSW{h, h2} {
		if err := x.Upsert(ctx, "tools", more); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(encode(t, h), encode(t, h2)) {
		t.Fatal("loaded index diverges from the original after the same writes")
	}
}

func TestPersistCorruption(t *testing.T) {
	h := persistFixture(t)
	good := encode(t, h)
	if _, err := ReadHNSW(bytes.NewReader(good)); err != nil {
		t.Fatal(err)
	}
	check := func(name string, data []byte) {
		t.Helper()
		_, err := ReadHNSW(bytes.NewReader(data))
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%s: err = %v, want ErrCorrupt", name, err)
		}
	}
	for _, n := range []int{0, 3, 8, 12, 40, 100, len(good) / 3, len(good) / 2, len(good) - 5, len(good) - 1} {
		check("truncated to "+strconv.Itoa(n), good[:n])
	}
	for _, at := range []int{0, 9, 14, 60, len(good) / 4, len(good) / 2, len(good) - 20, len(good) - 2} {
		bad := bytes.Clone(good)
		bad[at] ^= 0x5a
		check("byte "+strconv.Itoa(at)+" flipped", bad)
	}
	// A reader that fails is not reported as corruption.
	boom := errors.New("disk on fire")
	if _, err := ReadHNSW(iotest.ErrReader(boom)); !errors.Is(err, boom) || errors.Is(err, ErrCorrupt) {
		t.Fatalf("reader error: %v", err)
	}
	dir := t.TempDir()
	if _, err := LoadHNSW(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
	path := filepath.Join(dir, "cut.hnsw")
	os.WriteFile(path, good[:len(good)/2], 0o600)
	if _, err := LoadHNSW(path); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("truncated file: %v", err)
	}
}
