package hostio

import (
	"bytes"
	"strconv"
)

// ProcStat is what custody reads from /proc/<pid>/stat.
type ProcStat struct {
	PID     int
	PPID    int
	Command string
	// Start is the process start time in clock ticks since boot.
	Start uint64
	// State is the state letter (R, S, D, Z, T, ...); Z is a zombie: it
	// has exited and waits only to be collected.
	State byte
	// Group is the process group id.
	Group int
}

// ParseProcStat parses the contents of /proc/<pid>/stat. The command name
// is between the first '(' and the last ')' and may hold spaces and
// parentheses; the state is field 3, the process group field 5 and the
// start time field 22.
func ParseProcStat(b []byte) (ProcStat, error) {
	open := bytes.IndexByte(b, '(')
	closing := bytes.LastIndexByte(b, ')')
	if open <= 0 || closing < open {
		return ProcStat{}, MalformedAt("proc stat", "no (command) in %q", Truncate(b))
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:open])))
	if err != nil || pid <= 0 {
		return ProcStat{}, MalformedAt("proc stat", "bad pid in %q", Truncate(b))
	}
	f := bytes.Fields(b[closing+1:])
	// f[0] is field 3 (state); starttime is field 22, f[19].
	if len(f) < 20 {
		return ProcStat{}, MalformedAt("proc stat", "%d fields after the command, want at least 20", len(f))
	}
	start, err := strconv.ParseUint(string(f[19]), 10, 64)
	if err != nil {
		return ProcStat{}, MalformedAt("proc stat", "bad start time %q", f[19])
	}
	ppid, err := strconv.Atoi(string(f[1]))
	if err != nil {
		return ProcStat{}, MalformedAt("proc stat", "bad parent pid %q", f[1])
	}
	group, err := strconv.Atoi(string(f[2]))
	if err != nil {
		return ProcStat{}, MalformedAt("proc stat", "bad process group %q", f[2])
	}
	if len(f[0]) != 1 {
		return ProcStat{}, MalformedAt("proc stat", "bad state %q", f[0])
	}
	return ProcStat{PID: pid, PPID: ppid, Command: string(b[open+1 : closing]), Start: start, State: f[0][0], Group: group}, nil
}

func Truncate(b []byte) string {
	if len(b) > 64 {
		return string(b[:64]) + "…"
	}
	return string(b)
}
