// Package safety holds custody's end-to-end tests of removal safety: one
// case per way worktree cleanup tools lose work, the hazard tables of
// package fixtures, the proofs plan accepts and the observations it
// makes, each driving the built binary in real git repositories.
package safety

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
