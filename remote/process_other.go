//go:build !unix

package remote

import "os/exec"

// Process groups are a Unix notion; elsewhere the leader is all that is
// stopped.
func setProcessGroup(*exec.Cmd) {}

func killProcessGroup(int) error { return nil }
