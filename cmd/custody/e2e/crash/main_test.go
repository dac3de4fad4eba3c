// Package crash holds custody's end-to-end tests of kills and races: the
// failpoint build killed at every failpoint of new, apply, land and sweep
// and what resume makes of each, and commands racing each other on one
// repository, each driving the built binary in real git repositories
// (relocation's are in e2e/relocate).
package crash

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
