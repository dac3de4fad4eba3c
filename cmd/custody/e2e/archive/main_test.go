// Package archive holds custody's end-to-end tests of archives (finish
// --archive, archive create, list, verify, restore and prune, and removal
// on an archive's proof), each driving the built binary in real git
// repositories, with the kills at archive's failpoints.
package archive

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
