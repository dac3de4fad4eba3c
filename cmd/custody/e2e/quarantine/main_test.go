// Package quarantine holds custody's end-to-end tests of the quarantine
// apply removes a tree through: its check against HEAD's manifest while
// files change, are swapped or are written to, and the build output it
// deletes, each driving the built binary in real git repositories.
package quarantine

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
