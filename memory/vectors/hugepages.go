package vectors

import "unsafe"

// Huge pages. A beam search reads the quantised rows, scales and layer-0
// lists of nodes it has never touched, at random: at 100k × 384 that is
// 38 MB of rows, about 9,500 pages of 4 KB, several times what the TLB
// maps, so many row reads also walk the page table. Backed by 2 MB pages
// the same slabs take 19 TLB entries. The graph therefore asks the kernel
// (where it can, see adviseHugePages) to back its hot slabs with huge
// pages each time one of them moves to a larger array. The float rows are
// left out: a query reads only the few it re-ranks, and collapsing them
// would copy 4× the bytes.

// hugePages switches the advice off for the benchmarks' before/after
// measurement; nothing else sets it.
var hugePages = true

// hugePageSize is the size of the transparent huge pages asked for.
const hugePageSize = 2 << 20

// adviseSlabs gives the huge-page advice for each hot slab of g that was
// reallocated since it was last given: the arrays only grow (append), so
// the advice is renewed at each growth, a logarithmic number of times.
// The slab a grown one replaced loses the advice (MADV_NOHUGEPAGE), so
// that the memory Go frees and reuses does not keep it: Go's own runtime
// gave such advice up for the memory it held on to (golang/go#64332).
//
// collapse also has the kernel collapse, now, the pages the slabs already
// hold (MADV_COLLAPSE): a graph loaded from a file fills its slabs before
// the advice. Collapsing copies the slabs, up to hundreds of MB, so it is
// asked only of a graph no query reads yet; a graph growing under its
// write lock gets huge pages for the memory it faults in after the
// advice, and the kernel's background collapsing for the rest.
func (g *graph) adviseSlabs(collapse bool) {
	if !hugePages {
		return
	}
	for i, slab := range [...]struct {
		p unsafe.Pointer
		n int
	}{
		{unsafe.Pointer(unsafe.SliceData(g.qvals)), cap(g.qvals)},
		{unsafe.Pointer(unsafe.SliceData(g.qscale)), 4 * cap(g.qscale)},
		{unsafe.Pointer(unsafe.SliceData(g.links0)), 4 * cap(g.links0)},
	} {
		if slab.p == nil || slab.p == g.advised[i].p || slab.n < 2*hugePageSize {
			continue
		}
		if old := g.advised[i]; old.p != nil {
			unadviseHugePages(old.p, old.n)
		}
		g.advised[i] = advisedSlab{slab.p, slab.n}
		adviseHugePages(slab.p, slab.n, collapse)
	}
}

// advisedSlab is a slab given the huge-page advice: its array and length
// in bytes.
type advisedSlab struct {
	p unsafe.Pointer
	n int
}

// hugeRange is the part of the n bytes at address p that whole huge pages
// cover, as an offset from p and a length (0 when none).
func hugeRange(p uintptr, n int) (off, length int) {
	start := (p + hugePageSize - 1) &^ (hugePageSize - 1)
	end := (p + uintptr(n)) &^ (hugePageSize - 1)
	if end <= start {
		return 0, 0
	}
	return int(start - p), int(end - start)
}
