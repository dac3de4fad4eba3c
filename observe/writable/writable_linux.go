//go:build linux

package writable

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// readOnlyMount reports whether the file system holding path is mounted
// read-only (statfs's ST_RDONLY, which reports a read-only bind mount too).
func readOnlyMount(path string) bool {
	if path == "" {
		return false
	}
	var s unix.Statfs_t
	if err := unix.Statfs(path, &s); err != nil {
		return false
	}
	return s.Flags&unix.ST_RDONLY != 0
}

// maxMountInfo bounds what is read of /proc/self/mountinfo.
const maxMountInfo = 16 << 20

// mountOf is the mount point of the mount holding path: the longest mount
// point in /proc/self/mountinfo that is path (its symlinks resolved) or an
// ancestor of it; "" when the table cannot be read.
func mountOf(path string) string {
	if path == "" {
		return ""
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		real = path
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	best := ""
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	read := 0
	for sc.Scan() {
		if read += len(sc.Bytes()) + 1; read > maxMountInfo {
			break
		}
		// id parent major:minor root mount-point options ...
		fields := bytes.Fields(sc.Bytes())
		if len(fields) < 5 {
			continue
		}
		mp := unescapeMount(string(fields[4]))
		if within(real, mp) && len(mp) > len(best) {
			best = mp
		}
	}
	return best
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(path, "/")
	}
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// unescapeMount undoes the octal escapes (\040 for a space, \011, \012,
// \134) the kernel writes in mountinfo's paths.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
