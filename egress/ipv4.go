package egress

import (
	"errors"
	"net/netip"
	"strings"
)

// This file reads host names the way URL parsers, resolvers and forward
// proxies do before they connect, so that the policy checks the address a
// host will reach and not the text it is written as.

// ParseURLHost reads host (a URL's host, without brackets or port) as the
// WHATWG URL Standard's host parser reads one that ends in a number: as an
// IPv4 address in any of the spellings that browsers, curl, inet_aton and
// the proxies built on them accept. Each of the one to four dot-separated
// parts is decimal, octal after a leading "0" or hexadecimal after "0x",
// and the last part fills the bytes the others leave: "2852039166",
// "0xa9fea9fe", "169.254.43518" and "0251.0376.0251.0376" are all
// 169.254.169.254. A trailing dot is ignored.
//
// numeric reports whether host is an address in that sense: its last label
// is all decimal digits or a valid "0x" number. A host that is not
// numeric is a domain name (addr is invalid, err nil); a numeric one that
// is not a valid address ("1.2.3.4.5", "1.2.3.256", "08") is an error,
// as in the URL Standard.
func ParseURLHost(host string) (addr netip.Addr, numeric bool, err error) {
	host = strings.ToLower(host)
	if !endsInNumber(host) {
		return netip.Addr{}, false, nil
	}
	addr, err = parseIPv4(host)
	return addr, true, err
}

// errNotIPv4 is the error of a host that ends in a number but is no IPv4
// address in any spelling.
var errNotIPv4 = errors.New("the host ends in a number but is not an IPv4 address")

// endsInNumber is the URL Standard's "ends in a number checker".
func endsInNumber(host string) bool {
	parts := strings.Split(host, ".")
	if parts[len(parts)-1] == "" {
		if len(parts) == 1 {
			return false
		}
		parts = parts[:len(parts)-1]
	}
	last := parts[len(parts)-1]
	if last != "" && strings.Trim(last, "0123456789") == "" {
		return true
	}
	_, ok := parseIPv4Number(last)
	return ok
}

// parseIPv4 is the URL Standard's IPv4 parser.
func parseIPv4(host string) (netip.Addr, error) {
	parts := strings.Split(host, ".")
	if parts[len(parts)-1] == "" && len(parts) > 1 {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return netip.Addr{}, errNotIPv4
	}
	numbers := make([]uint64, len(parts))
	for i, p := range parts {
		n, ok := parseIPv4Number(p)
		if !ok {
			return netip.Addr{}, errNotIPv4
		}
		if i < len(parts)-1 && n > 255 {
			return netip.Addr{}, errNotIPv4
		}
		numbers[i] = n
	}
	// The last number fills the bytes the others leave.
	if numbers[len(numbers)-1] >= 1<<(8*(5-len(numbers))) {
		return netip.Addr{}, errNotIPv4
	}
	ipv4 := numbers[len(numbers)-1]
	for i, n := range numbers[:len(numbers)-1] {
		ipv4 += n << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(ipv4 >> 24), byte(ipv4 >> 16), byte(ipv4 >> 8), byte(ipv4)}), nil
}

// parseIPv4Number is the URL Standard's IPv4 number parser: decimal,
// octal after a leading "0", hexadecimal after "0x" ("0x" alone is 0).
// A number above 2^32, which no address part can hold, is read as 2^32+1
// so that it cannot overflow.
func parseIPv4Number(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	radix := uint64(10)
	switch {
	case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
		radix, s = 16, s[2:]
	case len(s) >= 2 && s[0] == '0':
		radix, s = 8, s[1:]
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		var d uint64
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			d = uint64(c - '0')
		case c >= 'a' && c <= 'f':
			d = uint64(c-'a') + 10
		case c >= 'A' && c <= 'F':
			d = uint64(c-'A') + 10
		default:
			return 0, false
		}
		if d >= radix {
			return 0, false
		}
		if n = n*radix + d; n > 1<<32 {
			n = 1<<32 + 1
		}
	}
	return n, true
}
