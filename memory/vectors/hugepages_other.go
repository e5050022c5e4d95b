//go:build !linux

package vectors

import "unsafe"

// adviseHugePages does nothing where transparent huge pages cannot be
// asked for.
func adviseHugePages(unsafe.Pointer, int, bool) {}

// unadviseHugePages does nothing where transparent huge pages cannot be
// asked for.
func unadviseHugePages(unsafe.Pointer, int) {}
