// Package relocate holds custody's end-to-end tests of relocation under
// kills and against hostile trees: the failpoint build killed at every
// relocate/* failpoint and what resume makes of each, and a tree that
// changes under a move (a process entering, a parent swapped for a
// symlink, submodules, admin state), each driving the built binary in
// real git repositories.
package relocate

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
