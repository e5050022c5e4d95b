package vectors

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
)

// ErrCorrupt is wrapped by every error that [ReadHNSW] and [LoadHNSW]
// return for a file that is not a complete, intact HNSW file of a version
// this package reads: truncated, damaged (checksum mismatch), inconsistent,
// or of an unknown format. Callers that see it rebuild the index from the
// store.
var ErrCorrupt = errors.New("vectors: corrupt or unreadable index file")

// The file format, version 3. Versions 1 and 2 are read too: version 1
// lacks the tuned ef pair, and version 2's pair was chosen by the earlier
// tuner (a coarser ladder of beam widths, see efLadder), so the namespaces
// of both are tuned at load; version 3 has the same layout as 2. All integers are little-endian; a string is a
// u32 length and its bytes.
//
//	magic "AMCPHNSW", u32 version
//	u32 dims, M, efConstruction, efSearch, exactThreshold
//	  (efSearch 0: tuned per namespace, see tune.go; files written before
//	  tuning existed hold the fixed default 64, which OpenDurable replaces
//	  with its caller's choice)
//	f64 compactRatio, u64 seed
//	u32 namespace count, then per namespace, in name order:
//	  string name, string rng state (math/rand/v2 PCG binary form)
//	  u32 nodes, u32 entry, u32 maxLevel
//	  (version ≥ 2) u32 tuned ef, u32 live count when tuned (0, 0: not tuned)
//	  per node: string id, u8 level, u8 tombstone,
//	    u32 metadata pairs then key and value strings in key order,
//	    dims × f32 normalised values,
//	    for each layer 0..level: u32 count, count × u32 neighbours
//	u32 CRC-32C of every byte before it
const (
	fileMagic   = "AMCPHNSW"
	fileVersion = 3

	maxFileString = 1 << 24
	maxFileDims   = 1 << 16
	maxFileM      = 1 << 12
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// WriteTo writes the whole index in the versioned binary format described
// above and implements io.WriterTo. Each namespace is written under its read
// lock, so queries continue meanwhile and writes to it wait.
func (h *HNSW) WriteTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriterSize(w, 1<<16)
	e := &encoder{w: bw, crc: crc32.New(castagnoli)}

	h.mu.RLock()
	names := make([]string, 0, len(h.namespaces))
	for name := range h.namespaces {
		names = append(names, name)
	}
	spaces := make([]*hnswSpace, len(names))
	slices.Sort(names)
	for i, name := range names {
		spaces[i] = h.namespaces[name]
	}
	h.mu.RUnlock()

	o := h.opts
	b := append([]byte(fileMagic), 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(b[8:], fileVersion)
	for _, v := range []int{h.dims, o.M, o.EfConstruction, o.EfSearch, o.ExactThreshold} {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(o.CompactRatio))
	b = binary.LittleEndian.AppendUint64(b, o.Seed)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(names)))
	e.write(b)
	for i, sp := range spaces {
		sp.tuneMu.Lock() // before mu, as in tune
		sp.mu.RLock()
		var ef, at uint32
		if sp.tunedGraph == sp.g {
			ef, at = uint32(sp.ef.Load()), uint32(sp.tunedAt)
		}
		e.graph(names[i], sp.g, ef, at)
		sp.mu.RUnlock()
		sp.tuneMu.Unlock()
	}
	if e.err == nil {
		e.n += 4
		_, e.err = bw.Write(binary.LittleEndian.AppendUint32(nil, e.crc.Sum32()))
	}
	if e.err == nil {
		e.err = bw.Flush()
	}
	return e.n, e.err
}

type encoder struct {
	w   *bufio.Writer
	crc hash.Hash32
	buf []byte
	n   int64
	err error
}

func (e *encoder) write(b []byte) {
	if e.err != nil {
		return
	}
	e.crc.Write(b)
	var n int
	n, e.err = e.w.Write(b)
	e.n += int64(n)
}

func appendString(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

func (e *encoder) graph(name string, g *graph, tunedEf, tunedAt uint32) {
	state, err := g.src.MarshalBinary()
	if err != nil {
		e.err = err
		return
	}
	b := appendString(e.buf[:0], name)
	b = appendString(b, string(state))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(g.ids)))
	b = binary.LittleEndian.AppendUint32(b, g.entry)
	b = binary.LittleEndian.AppendUint32(b, uint32(g.maxLevel))
	b = binary.LittleEndian.AppendUint32(b, tunedEf)
	b = binary.LittleEndian.AppendUint32(b, tunedAt)
	e.write(b)
	keys := []string{}
	for i := range g.ids {
		b = appendString(b[:0], g.ids[i])
		dead := byte(0)
		if g.dead[i] {
			dead = 1
		}
		b = append(b, g.levels[i], dead)
		keys = keys[:0]
		for k := range g.meta[i] {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(keys)))
		for _, k := range keys {
			b = appendString(b, k)
			b = appendString(b, g.meta[i][k])
		}
		for _, x := range g.vec(uint32(i)) {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
		}
		for l := 0; l <= int(g.levels[i]); l++ {
			links := g.links(uint32(i), l)
			b = binary.LittleEndian.AppendUint32(b, uint32(len(links)))
			for _, nb := range links {
				b = binary.LittleEndian.AppendUint32(b, nb)
			}
		}
		e.write(b)
		if e.err != nil {
			return
		}
	}
	e.buf = b
}

// ReadHNSW reads an index written by [HNSW.WriteTo]. Its dimensions and
// options come from the file, except RecallTarget, which is not saved and
// takes its default. With a tuned EfSearch (0), a namespace whose tuned
// width was not saved (a version 1 file, or one saved before its first
// tuning) or was chosen by the earlier tuner (a version 2 file) is tuned
// before ReadHNSW returns (2–3 s at 100k vectors). A truncated, damaged or unknown file yields
// an error wrapping [ErrCorrupt]; a failing reader yields that reader's
// error.
func ReadHNSW(r io.Reader) (*HNSW, error) {
	d := &decoder{r: bufio.NewReaderSize(r, 1<<16), crc: crc32.New(castagnoli)}
	h, err := d.index()
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("%w: truncated", ErrCorrupt)
		}
		return nil, err
	}
	h.mu.RLock()
	spaces := make([]*hnswSpace, 0, len(h.namespaces))
	for _, sp := range h.namespaces {
		spaces = append(spaces, sp)
	}
	h.mu.RUnlock()
	for _, sp := range spaces {
		h.maybeTune(sp) // a no-op for a namespace loaded with its tuned width
	}
	return h, nil
}

type decoder struct {
	version          uint32
	tunedEf, tunedAt uint32 // of the namespace being read (version 3)
	r                *bufio.Reader
	crc              hash.Hash32
	buf              []byte
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

func (d *decoder) bytes(n int) ([]byte, error) {
	if cap(d.buf) < n {
		d.buf = make([]byte, n)
	}
	b := d.buf[:n]
	if _, err := io.ReadFull(d.r, b); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	d.crc.Write(b)
	return b, nil
}

func (d *decoder) u32() (uint32, error) {
	b, err := d.bytes(4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (d *decoder) u64() (uint64, error) {
	b, err := d.bytes(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

func (d *decoder) str() (string, error) {
	n, err := d.u32()
	if err != nil {
		return "", err
	}
	if n > maxFileString {
		return "", corrupt("string of %d bytes", n)
	}
	b, err := d.bytes(int(n))
	return string(b), err
}

func (d *decoder) index() (*HNSW, error) {
	b, err := d.bytes(12)
	if err != nil {
		return nil, err
	}
	if string(b[:8]) != fileMagic {
		return nil, corrupt("not an HNSW index file")
	}
	d.version = binary.LittleEndian.Uint32(b[8:])
	if d.version < 1 || d.version > fileVersion {
		return nil, corrupt("format version %d; this build reads 1 to %d", d.version, fileVersion)
	}
	var p [5]uint32
	for i := range p {
		if p[i], err = d.u32(); err != nil {
			return nil, err
		}
	}
	dims, m, efC, efS, exactT := int(p[0]), int(p[1]), int(p[2]), int(p[3]), int(int32(p[4]))
	if dims > maxFileDims || m < 2 || m > maxFileM || efC < 1 || int32(efS) < 0 || exactT == 0 {
		return nil, corrupt("bad parameters dims=%d M=%d efC=%d efS=%d exact=%d", dims, m, efC, efS, exactT)
	}
	ratioBits, err := d.u64()
	if err != nil {
		return nil, err
	}
	seed, err := d.u64()
	if err != nil {
		return nil, err
	}
	h := NewHNSW(dims, HNSWOptions{
		M: m, EfConstruction: efC, EfSearch: efS, ExactThreshold: exactT,
		CompactRatio: math.Float64frombits(ratioBits), Seed: seed,
	})
	nspaces, err := d.u32()
	if err != nil {
		return nil, err
	}
	for range nspaces {
		name, err := d.str()
		if err != nil {
			return nil, err
		}
		if _, dup := h.namespaces[name]; dup {
			return nil, corrupt("namespace %q twice", name)
		}
		g, err := d.graph(h.newGraph(name))
		if err != nil {
			return nil, err
		}
		sp := &hnswSpace{g: g}
		if d.tunedEf > 0 {
			sp.ef.Store(int64(d.tunedEf))
			sp.tunedGraph, sp.tunedAt = g, int(d.tunedAt)
		}
		h.namespaces[name] = sp
	}
	want := d.crc.Sum32()
	var sum [4]byte
	if _, err := io.ReadFull(d.r, sum[:]); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	if got := binary.LittleEndian.Uint32(sum[:]); got != want {
		return nil, corrupt("checksum %08x, want %08x", got, want)
	}
	return h, nil
}

func (d *decoder) graph(g *graph) (*graph, error) {
	state, err := d.str()
	if err != nil {
		return nil, err
	}
	if err := g.src.UnmarshalBinary([]byte(state)); err != nil {
		return nil, corrupt("rng state: %v", err)
	}
	g.rng = rand.New(g.src)
	var hdr [3]uint32
	for i := range hdr {
		if hdr[i], err = d.u32(); err != nil {
			return nil, err
		}
	}
	n, entry, maxLevel := int(hdr[0]), hdr[1], int(hdr[2])
	d.tunedEf, d.tunedAt = 0, 0
	if d.version >= 2 {
		if d.tunedEf, err = d.u32(); err != nil {
			return nil, err
		}
		if d.tunedAt, err = d.u32(); err != nil {
			return nil, err
		}
		if d.tunedEf > maxFileM*64 {
			return nil, corrupt("tuned ef %d", d.tunedEf)
		}
		if d.version < 3 {
			d.tunedEf, d.tunedAt = 0, 0 // the earlier tuner's choice: tune again
		}
	}
	g.reserve(min(n, 1<<16)) // n is not trusted yet: grow as nodes arrive
	for i := range n {
		id, err := d.str()
		if err != nil {
			return nil, err
		}
		b, err := d.bytes(2)
		if err != nil {
			return nil, err
		}
		level, dead := int(b[0]), b[1]
		if level > maxLevelCap || dead > 1 {
			return nil, corrupt("node %d: level %d, tombstone %d", i, level, dead)
		}
		npairs, err := d.u32()
		if err != nil {
			return nil, err
		}
		var meta map[string]string
		if npairs > 0 {
			meta = make(map[string]string, min(npairs, 64))
		}
		for range npairs {
			k, err := d.str()
			if err != nil {
				return nil, err
			}
			v, err := d.str()
			if err != nil {
				return nil, err
			}
			meta[k] = v
		}
		if len(meta) != int(npairs) {
			return nil, corrupt("node %d: repeated metadata key", i)
		}
		raw, err := d.bytes(4 * g.dims)
		if err != nil {
			return nil, err
		}
		g.ids = append(g.ids, id)
		g.meta = append(g.meta, meta)
		for j := range g.dims {
			g.values = append(g.values, math.Float32frombits(binary.LittleEndian.Uint32(raw[4*j:])))
		}
		g.appendQuant(g.vec(uint32(i))) // derived, so not in the file
		g.levels = append(g.levels, uint8(level))
		g.dead = append(g.dead, dead == 1)
		g.links0 = append(g.links0, make([]uint32, g.m0+1)...)
		var up []uint32
		if level > 0 {
			up = make([]uint32, level*(g.m+1))
		}
		g.upper = append(g.upper, up)
		for l := 0; l <= level; l++ {
			row := g.slot(uint32(i), l)
			count, err := d.u32()
			if err != nil {
				return nil, err
			}
			if int(count) > len(row)-1 {
				return nil, corrupt("node %d layer %d: %d neighbours", i, l, count)
			}
			row[0] = count
			for j := range int(count) {
				if row[1+j], err = d.u32(); err != nil {
					return nil, err
				}
			}
		}
		if dead == 1 {
			g.ndead++
			continue
		}
		if _, dup := g.index[id]; dup {
			return nil, corrupt("id %q live twice", id)
		}
		g.index[id] = uint32(i)
		for k, v := range meta {
			key := postingKey(k, v)
			g.postings[key] = append(g.postings[key], uint32(i))
		}
	}
	for i := range n {
		for l := 0; l <= int(g.levels[i]); l++ {
			for _, nb := range g.links(uint32(i), l) {
				if int(nb) >= n || int(g.levels[nb]) < l {
					return nil, corrupt("node %d layer %d: bad neighbour %d", i, l, nb)
				}
			}
		}
	}
	if n > 0 {
		if int(entry) >= n || int(g.levels[entry]) != maxLevel {
			return nil, corrupt("entry point %d at level %d", entry, maxLevel)
		}
		g.entry, g.maxLevel, g.hasEntry = entry, maxLevel, true
	}
	g.adviseSlabs(true) // no query reads the graph yet
	return g, nil
}

// Save writes the index to path atomically: to a temporary file in the same
// directory, synced, then renamed over path, and the directory synced. A
// crash leaves either the old file or the new one.
func (h *HNSW) Save(path string) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = h.WriteTo(f); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return err
	}
	if d, derr := os.Open(dir); derr == nil {
		d.Sync() // best effort: persists the rename on most file systems
		d.Close()
	}
	return nil
}

// LoadHNSW reads an index saved by [HNSW.Save]. See [ReadHNSW] for errors;
// a missing file is an fs.ErrNotExist error.
func LoadHNSW(path string) (*HNSW, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h, err := ReadHNSW(f)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	return h, nil
}
