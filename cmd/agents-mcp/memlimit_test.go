package main

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

// TestParseCgroupMemoryLimit reads the limit files of cgroup v1 and v2 from
// testdata: a byte count, no limit ("max", v1's huge number), and garbage.
func TestParseCgroupMemoryLimit(t *testing.T) {
	for _, tc := range []struct {
		file    string
		limit   int64
		ok, bad bool
	}{
		{file: "v2-1g", limit: 1 << 30, ok: true},
		{file: "v1-256m", limit: 256 << 20, ok: true},
		{file: "v2-max"},
		{file: "v1-unlimited"},
		{file: "garbage", bad: true},
		{file: "empty", bad: true},
	} {
		data := readTestdata(t, tc.file)
		limit, ok, err := parseCgroupMemoryLimit(data)
		if (err != nil) != tc.bad || ok != tc.ok || limit != tc.limit {
			t.Errorf("%s: got %d, %v, %v; want %d, %v, error %v", tc.file, limit, ok, err, tc.limit, tc.ok, tc.bad)
		}
	}
}

// TestSetMemoryLimitFromCgroup sets 90 % of the first existing file's limit,
// and nothing when GOMEMLIMIT is set, when there is no limit, or no file.
func TestSetMemoryLimitFromCgroup(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
	dir := filepath.Join("testdata", "cgroup")
	noEnv := func(string) string { return "" }
	gib := int64(1 << 30)

	got, err := setMemoryLimitFromCgroup(noEnv, filepath.Join(dir, "absent"), filepath.Join(dir, "v2-1g"))
	if want := int64(float64(gib) * 0.9); err != nil || got != want || debug.SetMemoryLimit(-1) != want {
		t.Fatalf("v2 1 GiB: got %d, %v, runtime limit %d; want %d", got, err, debug.SetMemoryLimit(-1), want)
	}
	debug.SetMemoryLimit(old)

	for name, files := range map[string][]string{
		"no limit": {filepath.Join(dir, "v2-max")},
		"no file":  {filepath.Join(dir, "absent")},
	} {
		if got, err := setMemoryLimitFromCgroup(noEnv, files...); err != nil || got != 0 || debug.SetMemoryLimit(-1) != old {
			t.Errorf("%s: got %d, %v, runtime limit %d; want no limit set", name, got, err, debug.SetMemoryLimit(-1))
		}
	}
	env := func(k string) string {
		if k == "GOMEMLIMIT" {
			return "100MiB"
		}
		return ""
	}
	if got, err := setMemoryLimitFromCgroup(env, filepath.Join(dir, "v2-1g")); err != nil || got != 0 || debug.SetMemoryLimit(-1) != old {
		t.Errorf("GOMEMLIMIT set: got %d, %v; want the cgroup limit ignored", got, err)
	}
	if _, err := setMemoryLimitFromCgroup(noEnv, filepath.Join(dir, "garbage")); err == nil {
		t.Error("garbage: no error")
	}
}

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "cgroup", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
