//go:build unix

package remote

import (
	"errors"
	"os/exec"
	"syscall"
)

// setProcessGroup starts the child as the leader of a new process group, so
// that signals to the group reach everything it starts and none of it
// receives the terminal's signals meant for agents-mcp.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func killProcessGroup(pgid int) error {
	err := syscall.Kill(-pgid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil // nothing left
	}
	return err
}
