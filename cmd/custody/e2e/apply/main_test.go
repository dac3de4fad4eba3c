// Package apply holds custody's end-to-end tests of apply's removal path:
// the quarantine and its verified deletion, git's admin entries and
// registry, trees that change while apply checks them, build output, and
// the recovery refs apply leaves, each driving the built binary in real
// git repositories.
package apply

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
