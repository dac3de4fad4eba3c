// Package safety holds custody's end-to-end tests of removal safety: one
// case per way worktree cleanup tools lose work (trees in use, ownership,
// a branch that moved, verified removal), each driving the built binary
// in real git repositories. State git status does not show, submodules
// and embedded repositories are package hiddenstate's; the proofs plan
// accepts, packages proof's and mergeproof's; the hazard tables, package
// plan's.
package safety

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
