package vectors

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// adviseHugePages asks Linux to back the whole huge pages within the n
// bytes at p with transparent huge pages (MADV_HUGEPAGE, for what is
// faulted in later) and, with collapse, to collapse the pages already
// there now (MADV_COLLAPSE, Linux 6.1 and later; synchronous: it copies
// them). Both are hints: when the kernel lacks them, has transparent huge
// pages off, or has no free huge page, the memory stays as it was, which
// is only slower.
func adviseHugePages(p unsafe.Pointer, n int, collapse bool) {
	b := hugeSlice(p, n)
	if b == nil {
		return
	}
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE)
	if collapse {
		_ = unix.Madvise(b, unix.MADV_COLLAPSE)
	}
}

// unadviseHugePages takes the advice of adviseHugePages back from the n
// bytes at p (MADV_NOHUGEPAGE).
func unadviseHugePages(p unsafe.Pointer, n int) {
	if b := hugeSlice(p, n); b != nil {
		_ = unix.Madvise(b, unix.MADV_NOHUGEPAGE)
	}
}

// hugeSlice is the part of the n bytes at p that whole huge pages cover,
// nil when none.
func hugeSlice(p unsafe.Pointer, n int) []byte {
	off, length := hugeRange(uintptr(p), n)
	if length == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Add(p, off)), length)
}
