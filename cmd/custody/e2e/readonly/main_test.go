// Package readonly holds custody's end-to-end tests of a repository on a
// read-only file system (on Linux, a read-only bind mount): what only
// reads writes nothing, what writes is refused naming the read-only path,
// an older state file cannot be upgraded, and plan cannot fetch, each
// driving the built binary in real git repositories.
package readonly

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
