//go:build linux

package lockholder

import (
	"bytes"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Holders lists the processes holding a granted lock on the file at path
// (its device and inode, the link not followed), from /proc/locks, each
// with its command line and executable as far as they can be read.
func Holders(path string) ([]Process, error) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return nil, fmt.Errorf("lockholder: %w", err)
	}
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	dev := uint64(st.Dev) // its type differs by architecture
	var out []Process
	seen := map[int]bool{}
	for _, l := range ParseLocks(b) {
		if l.Major != unix.Major(dev) || l.Minor != unix.Minor(dev) || l.Inode != uint64(st.Ino) || seen[l.PID] {
			continue
		}
		seen[l.PID] = true
		p := Process{PID: l.PID, Write: l.Write}
		dir := "/proc/" + strconv.Itoa(l.PID)
		if cmd, err := os.ReadFile(dir + "/cmdline"); err == nil && len(cmd) > 0 {
			for _, a := range bytes.Split(bytes.TrimSuffix(cmd, []byte{0}), []byte{0}) {
				p.Args = append(p.Args, string(a))
			}
		}
		if exe, err := os.Readlink(dir + "/exe"); err == nil {
			p.Exe = exe
		}
		out = append(out, p)
	}
	return out, nil
}
