// Package rpcid checks JSON-RPC ids before go-sdk decodes them. The SDK
// decodes a numeric id as a float64 and keeps its integer part, so 1.5 and
// 2^53+1 would be answered under another id than the one sent.
package rpcid

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// maxExact is the largest integer a float64 holds exactly: 2^53.
const maxExact = 1 << 53

// Inexact reports whether data, one JSON-RPC message, has a numeric id
// that is not an integer the SDK keeps exactly: one with a fraction or an
// exponent, or beyond ±2^53. Strings, null and a missing id are exact.
func Inexact(data []byte) bool {
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(data, &probe) != nil || len(probe.ID) == 0 {
		return false
	}
	c := probe.ID[0]
	if c != '-' && (c < '0' || c > '9') {
		return false // a string, null, or not a number at all
	}
	if bytes.ContainsAny(probe.ID, ".eE") {
		return true
	}
	n, err := strconv.ParseInt(string(probe.ID), 10, 64)
	return err != nil || n > maxExact || n < -maxExact
}
