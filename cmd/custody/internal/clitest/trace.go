package clitest

// Reading the trace custody --debug writes.

import "strings"

// GitRuns counts the git commands a --debug trace shows whose argument
// list starts with prefix (after "git").
func GitRuns(trace, prefix string) int {
	n := 0
	for _, line := range strings.Split(trace, "\n") {
		if strings.HasPrefix(line, "+ git "+prefix) {
			n++
		}
	}
	return n
}
