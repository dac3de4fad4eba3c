package clitest

import (
	"testing"

	"github.com/custody-sh/custody/fixtures/unprivileged"
)

// BinariesEnv names a directory holding the custody builds ("custody"
// and "custody-failpoint") that Main uses instead of building them.
const BinariesEnv = "CUSTODY_TEST_BINARIES"

// Unprivileged is unprivileged.Run for a test that drives custody: run by
// root, it runs this very test again as an unprivileged user, with copies
// of the builds Main made (which sit in a directory private to root), and
// returns true, the test's outcome being that run's. Run by anyone else it
// returns false and the test goes on. It is for a test whose subject is
// what permission bits refuse, which root is never refused.
func Unprivileged(t *testing.T) (ranElsewhere bool) {
	t.Helper()
	return unprivileged.Run(t, unprivileged.Files(BinariesEnv, Bin(), FailpointBin()))
}
