package httptools

import (
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
)

// A connection's failure reaches a tool's error without the addresses of
// its two ends (seen: a reset under load quoted "127.0.0.1:55706->…").
func TestTransportErrorNamesNoAddress(t *testing.T) {
	local := &net.TCPAddr{IP: net.IPv4(10, 0, 0, 5), Port: 41234}
	remote := &net.TCPAddr{IP: net.IPv4(10, 0, 0, 9), Port: 443}
	err := &url.Error{Op: "Get", URL: "https://10.0.0.9/items/7", Err: &net.OpError{
		Op: "read", Net: "tcp", Source: local, Addr: remote, Err: os.NewSyscallError("read", syscall.ECONNRESET),
	}}
	got := transportError(err, nil)
	if strings.Contains(got, "10.0.0.") {
		t.Errorf("transportError = %q, names an address", got)
	}
	if !strings.Contains(got, "connection reset by peer") || !strings.HasPrefix(got, "read tcp") {
		t.Errorf("transportError = %q, want the operation and its cause", got)
	}
}
