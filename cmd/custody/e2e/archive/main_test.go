// Package archive holds custody's end-to-end tests of archives (finish
// --archive, archive create, list, verify, restore and prune), each
// driving the built binary in real git repositories, with the kills at
// archive's failpoints. Removal on an archive's proof and the build output
// an archive leaves out are package archiveremoval's.
package archive

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
