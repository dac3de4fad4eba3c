// Package proof holds custody's end-to-end tests of the proofs plan
// accepts before a tree may go (commits published elsewhere, local refs
// that prove nothing, tags, root commits, dead and unavailable remotes),
// each driving the built binary in real git repositories. Squash and
// rebase merges, and the tips they are looked for on, are package
// mergeproof's.
package proof

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
