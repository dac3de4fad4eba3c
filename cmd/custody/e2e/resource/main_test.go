// Package resource holds custody's end-to-end tests of per-worktree
// resources (ensure, gc, takeover, the ledger), each driving the built
// binary in real git repositories against real external commands. Trees
// that vanished under their resources are package vanished's.
package resource

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
