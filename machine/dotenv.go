package machine

import "strconv"

// PortEnvKey is the .env variable holding a worktree's deterministic port
// (the value of @port@ in its resource commands).
const PortEnvKey = "CUSTODY_PORT"

// DotenvLines are exactly the lines custody owns in worktree rec's .env:
// its id, its port (when it has one), then each of its resources' handles
// as the ledger holds them (EnvLines). A .env holding only these lines is
// custody's to regenerate; any other line is the person's.
func DotenvLines(rec Record, rs []Resource) []string {
	lines := EnvLines(rec.ID, rs)
	if rec.Port == 0 {
		return lines
	}
	out := make([]string, 0, len(lines)+1)
	out = append(out, lines[0], PortEnvKey+"="+strconv.Itoa(rec.Port))
	return append(out, lines[1:]...)
}
