package vectors

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"path/filepath"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// tuneData is 3,000 vectors of 32 dims in isotropic clusters (the hard
// case, where the beam width matters) and 200 held-out queries.
func tuneData() ([]agentsmcp.Vector, [][]float32) { return dataset(41, 3000, 200, 32, 30, 0) }

// TestTunedEfFollowsTheTarget: a higher recall target gets a wider beam,
// and the held-out recall at each tuned beam reaches its target less a
// sampling margin.
func TestTunedEfFollowsTheTarget(t *testing.T) {
	ctx := context.Background()
	vs, qs := tuneData()
	flat := NewFlat(32)
	if err := flat.Upsert(ctx, "ns", vs); err != nil {
		t.Fatal(err)
	}
	var truth [][]agentsmcp.VectorMatch
	for _, q := range qs {
		truth = append(truth, mustQuery(t, flat, "ns", agentsmcp.VectorQuery{Values: q, TopK: 10}))
	}
	efs := map[float64]int{}
	for _, target := range []float64{0.8, 0.99} {
		h := NewHNSW(32, HNSWOptions{Seed: 3, M: 4, EfConstruction: 20, RecallTarget: target})
		if err := h.Upsert(ctx, "ns", vs); err != nil {
			t.Fatal(err)
		}
		if got := h.EfSearch("other"); got != untunedEf {
			t.Errorf("an absent namespace's ef = %d, want %d", got, untunedEf)
		}
		efs[target] = h.EfSearch("ns")
		hits := 0
		for i, q := range qs {
			hits += realHits(mustQuery(t, h, "ns", agentsmcp.VectorQuery{Values: q, TopK: 10}), truth[i])
		}
		recall := float64(hits) / float64(10*len(qs))
		t.Logf("target %.2f: ef=%d, held-out recall@10 %.4f", target, efs[target], recall)
		if recall < target-0.03 {
			t.Errorf("target %.2f: held-out recall@10 %.4f at tuned ef=%d", target, recall, efs[target])
		}
	}
	if efs[0.99] <= efs[0.8] {
		t.Errorf("tuned ef %d for 0.99, %d for 0.8: want a wider beam for the higher target", efs[0.99], efs[0.8])
	}
}

// TestSmallOrFixedNamespacesAreNotTuned: below tuneMin vectors the beam is
// untunedEf, and a fixed EfSearch is never replaced.
func TestSmallOrFixedNamespacesAreNotTuned(t *testing.T) {
	ctx := context.Background()
	vs, _ := tuneData()
	h := NewHNSW(32, HNSWOptions{Seed: 3})
	if err := h.Upsert(ctx, "ns", vs[:tuneMin-1]); err != nil {
		t.Fatal(err)
	}
	if got := h.EfSearch("ns"); got != untunedEf {
		t.Errorf("ef of %d vectors = %d, want %d", tuneMin-1, got, untunedEf)
	}
	fixed := NewHNSW(32, HNSWOptions{Seed: 3, EfSearch: 20, M: 4, EfConstruction: 20})
	if err := fixed.Upsert(ctx, "ns", vs); err != nil {
		t.Fatal(err)
	}
	fixed.Tune()
	if got := fixed.EfSearch("ns"); got != 20 {
		t.Errorf("fixed EfSearch became %d, want 20", got)
	}
}

// TestOldFixedDefaultMigratesToTuned: a file saved with EfSearch 64 (the
// fixed default of earlier versions) opens with the caller's tuned default,
// and a tuned index saves and loads as tuned.
func TestOldFixedDefaultMigratesToTuned(t *testing.T) {
	ctx := context.Background()
	vs, _ := tuneData()
	dir := t.TempDir()
	old := NewHNSW(32, HNSWOptions{Seed: 3, M: 4, EfConstruction: 20, EfSearch: 64})
	if err := old.Upsert(ctx, "ns", vs); err != nil {
		t.Fatal(err)
	}
	if err := old.Save(DurablePath(dir, "e1")); err != nil {
		t.Fatal(err)
	}
	d, status, err := OpenDurable(dir, "e1", 32, HNSWOptions{})
	if err != nil || status != OpenedExisting {
		t.Fatalf("OpenDurable = %v, %v", status, err)
	}
	if d.Options().EfSearch != 0 || d.Options().M != 4 {
		t.Errorf("opened with %+v, want the file's M=4 and a tuned EfSearch (0)", d.Options())
	}
	tuned := d.EfSearch("ns")
	if tuned == 64 || tuned == untunedEf {
		t.Errorf("ef after opening = %d; want it tuned (this graph needs more than 64)", tuned)
	}
	path := filepath.Join(dir, "again.hnsw")
	if err := d.HNSW.Save(path); err != nil {
		t.Fatal(err)
	}
	again, err := LoadHNSW(path)
	if err != nil {
		t.Fatal(err)
	}
	if again.Options().EfSearch != 0 || again.EfSearch("ns") != tuned {
		t.Errorf("reloaded: EfSearch option %d, ef %d; want 0 and %d", again.Options().EfSearch, again.EfSearch("ns"), tuned)
	}
}

// TestTunedEfIsSavedAndOlderFilesStillLoad: a version 3 file carries each
// namespace's tuned width, which loading keeps rather than measuring again;
// a version 2 file (the same layout, its width chosen by the earlier tuner)
// and a version 1 file (no such field) load and are tuned at load.
func TestTunedEfIsSavedAndOlderFilesStillLoad(t *testing.T) {
	ctx := context.Background()
	vs, _ := tuneData()
	h := NewHNSW(32, HNSWOptions{Seed: 3, M: 4, EfConstruction: 20})
	if err := h.Upsert(ctx, "ns", vs); err != nil {
		t.Fatal(err)
	}
	tuned := h.EfSearch("ns")
	h.space("ns", false).ef.Store(7) // a width tuning would never choose
	v3 := encode(t, h)
	if v := binary.LittleEndian.Uint32(v3[8:]); v != 3 {
		t.Fatalf("WriteTo wrote version %d, want 3", v)
	}
	got, err := ReadHNSW(bytes.NewReader(v3))
	if err != nil {
		t.Fatal(err)
	}
	if ef := got.EfSearch("ns"); ef != 7 {
		t.Errorf("version 3: ef after load = %d, want the saved 7", ef)
	}
	body := v3[:len(v3)-4]
	withVersion := func(b []byte, version uint32) []byte {
		b = append([]byte(nil), b...)
		binary.LittleEndian.PutUint32(b[8:], version)
		return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	}
	v2 := withVersion(body, 2)
	old2, err := ReadHNSW(bytes.NewReader(v2))
	if err != nil {
		t.Fatal(err)
	}
	if ef := old2.EfSearch("ns"); ef != tuned {
		t.Errorf("version 2: ef after load = %d, want it tuned again to %d (not the saved 7)", ef, tuned)
	}
	// Version 1: drop the namespace's two tuning words, which follow
	// name, rng state and three u32s.
	off := 52 // magic, version, 5 × u32, f64, u64, u32 namespace count
	for range 2 {
		off += 4 + int(binary.LittleEndian.Uint32(body[off:]))
	}
	off += 12
	v1 := withVersion(append(append([]byte(nil), body[:off]...), body[off+8:]...), 1)
	old1, err := ReadHNSW(bytes.NewReader(v1))
	if err != nil {
		t.Fatal(err)
	}
	if ef := old1.EfSearch("ns"); ef != tuned {
		t.Errorf("version 1: ef after load = %d, want it tuned again to %d", ef, tuned)
	}
	v4 := withVersion(body, 4)
	if _, err := ReadHNSW(bytes.NewReader(v4)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("version 4: err = %v, want ErrCorrupt", err)
	}
}
