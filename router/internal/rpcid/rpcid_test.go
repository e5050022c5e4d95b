package rpcid

import "testing"

func TestInexact(t *testing.T) {
	for _, tc := range []struct {
		msg  string
		want bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, false},
		{`{"jsonrpc":"2.0","id":-7,"method":"ping"}`, false},
		{`{"jsonrpc":"2.0","id":"1.5","method":"ping"}`, false},
		{`{"jsonrpc":"2.0","id":null,"result":{}}`, false},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, false},
		{`{"jsonrpc":"2.0","id":9007199254740992,"method":"ping"}`, false},
		{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, true},
		{`{"jsonrpc":"2.0","id":1.0,"method":"ping"}`, true},
		{`{"jsonrpc":"2.0","id":1e3,"method":"ping"}`, true},
		{`{"jsonrpc":"2.0","id":-2E0,"method":"ping"}`, true},
		{`{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, true},
		{`{"jsonrpc":"2.0","id":-9007199254740993,"method":"ping"}`, true},
		{`{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}`, true},
		{`not json`, false},
	} {
		if got := Inexact([]byte(tc.msg)); got != tc.want {
			t.Errorf("Inexact(%s) = %v, want %v", tc.msg, got, tc.want)
		}
	}
}
