//go:build linux || darwin

package remote

import "syscall"

// h1ProbeSupported says whether [h1Conn.alive] can tell a connection the
// upstream closed while it was idle; without it the raw path's POSTs go on
// net/http's transport (see [HTTPTransport]).
const h1ProbeSupported = true

// alive reports whether an idle connection can carry a request: the
// upstream has neither closed it nor sent anything since its last answer.
// net/http learns this from the read loop it keeps on every idle
// connection; with no such goroutine, this peeks at the socket without
// waiting (one non-blocking recvfrom). A connection closed after the probe
// fails its request as it would on net/http's transport, which does not
// retry a POST once it is written.
func (c *h1Conn) alive() bool {
	if c.raw == nil || c.br.Buffered() > 0 {
		return false
	}
	ok := false
	err := c.raw.Read(func(fd uintptr) bool {
		var b [1]byte
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		// Nothing to read, and no end: the connection is idle and open.
		// A byte, an end of stream (n == 0) or any other error is not.
		ok = err == syscall.EAGAIN || err == syscall.EWOULDBLOCK
		return true // never wait for readability
	})
	return err == nil && ok
}
