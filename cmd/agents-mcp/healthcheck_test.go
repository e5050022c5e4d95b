package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHealthcheckCommand(t *testing.T) {
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte(`{"status":"ok"}`))
	}))
	defer ok.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(ok.URL, "http://"))
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := ln.Addr().String()
	ln.Close()
	env := func(string) string { return "" }
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr bool
	}{
		{"live", []string{"--addr", "127.0.0.1:" + port}, false},
		{"unspecified host is loopback", []string{"--addr", "0.0.0.0:" + port}, false},
		{"empty host is loopback", []string{"--addr", ":" + port}, false},
		{"not ready", []string{"--addr", "127.0.0.1:" + port, "--path", "/readyz"}, true},
		{"nothing listens", []string{"--addr", closed}, true},
		{"bad address", []string{"--addr", "nonsense"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := healthcheckCommand(context.Background(), tc.args, env, io.Discard)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
		})
	}
	// AGENTS_MCP_ADDR is the default address.
	if err := healthcheckCommand(context.Background(), nil, func(k string) string {
		if k == "AGENTS_MCP_ADDR" {
			return "0.0.0.0:" + port
		}
		return ""
	}, io.Discard); err != nil {
		t.Fatalf("with AGENTS_MCP_ADDR: %v", err)
	}
}
