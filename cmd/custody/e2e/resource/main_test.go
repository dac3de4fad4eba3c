// Package resource holds custody's end-to-end tests of per-worktree
// resources (ensure, gc, takeover, the ledger, and trees that vanished
// under their resources), each driving the built binary in real git
// repositories against real external commands.
package resource

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
