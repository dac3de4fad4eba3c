// Package archiveremoval holds custody's end-to-end tests of removal on an
// archive's proof and of the build output an archive leaves out (recorded
// in its manifest, deleted with the tree, stripped from an archive later),
// each driving the built binary in real git repositories, with the kills
// at apply's and strip's failpoints. The rest of archives is package
// archive's.
package archiveremoval

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
