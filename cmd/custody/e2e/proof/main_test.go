// Package proof holds custody's end-to-end tests of the proofs plan
// accepts before a tree may go (squash and rebase merges, commits
// published elsewhere, tags, remotes' tips and heads), each driving the
// built binary in real git repositories.
package proof

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
