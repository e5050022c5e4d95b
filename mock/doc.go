// Package mock holds test doubles of the root package's interfaces: one
// type per interface, whose methods call the function field of the same
// name (CallTool calls CallToolFn), as benbjohnson/wtf's mock package
// does. A test sets the fields its code under test uses; a method whose
// field is nil does what its doc comment says (a doubled store delegates
// to the real one it wraps, a provider has no tools), so that a test
// states only what differs from the real part.
//
// A double stands in where a real part cannot show what a test checks:
// a provider whose answer, panic or context a test scripts, a store that
// refuses or slows one write of a real store. Tests use real parts
// otherwise (the router, SQLite, go-sdk peers).
//
// It imports the root package only (architecture_test.go), so that the
// tests of every package may use it.
package mock
