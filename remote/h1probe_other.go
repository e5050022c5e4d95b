//go:build !(linux || darwin)

package remote

// h1ProbeSupported is false here: with no non-blocking peek at an idle
// connection, a reused connection the upstream had closed would fail a
// call, so the raw path stays on net/http's transport.
const h1ProbeSupported = false

func (c *h1Conn) alive() bool { return false }
