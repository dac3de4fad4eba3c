// Package hiddenstate holds custody's end-to-end tests of removal safety
// against work git status does not show: one case per kind of hidden
// state (index flags, nested git directories, per-worktree refs,
// operations in progress, files configuration hides from status), the
// leftovers of completed operations, submodules and embedded
// repositories, each driving the built binary in real git repositories.
// The other ways cleanup tools lose work are package safety's.
package hiddenstate

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
