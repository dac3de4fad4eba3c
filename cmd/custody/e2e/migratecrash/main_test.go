// Package migratecrash holds custody's end-to-end tests of custody migrate
// apply killed at each of its failpoints and at random instants, then run
// again to the end state of an uninterrupted run, each driving the built
// binary in real git repositories. The rest of migrate is package
// migrate's.
package migratecrash

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
