package main

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestSecretsKeyFileIsMadeOnceWhole: processes starting together (here,
// goroutines) all read the one key that was made, never an empty or a
// second one, and the file is private to its owner.
func TestSecretsKeyFileIsMadeOnceWhole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", "secrets.key")
	const n = 16
	keys := make([][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { keys[i], errs[i] = secretsKeyFile(path) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("call %d: %v", i, errs[i])
		}
		if !bytes.Equal(keys[i], keys[0]) {
			t.Fatalf("call %d read another key than call 0", i)
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	if again, err := secretsKeyFile(path); err != nil || !bytes.Equal(again, keys[0]) {
		t.Errorf("a later start reads %x, %v; want the same key", again, err)
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".secrets.key-*"))
	if len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
