package vectors

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// adviseHugePages asks Linux to back the whole huge pages within the n
// bytes at p with transparent huge pages (MADV_HUGEPAGE, for what is
// faulted in later) and to collapse the pages already there now
// (MADV_COLLAPSE, Linux 6.1 and later). Both are hints: when the kernel
// lacks them, has transparent huge pages off, or has no free huge page,
// the memory stays as it was, which is only slower.
func adviseHugePages(p unsafe.Pointer, n int) {
	off, length := hugeRange(uintptr(p), n)
	if length == 0 {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Add(p, off)), length)
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE)
	_ = unix.Madvise(b, unix.MADV_COLLAPSE)
}
