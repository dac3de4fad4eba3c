// Package mergeproof holds custody's end-to-end tests of the proofs plan
// accepts of merged work (squash and rebase merges, on every tip a remote
// advertises, pull request heads among them), each driving the built
// binary in real git repositories. Commits published elsewhere, tags and
// remotes are package proof's.
package mergeproof

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
