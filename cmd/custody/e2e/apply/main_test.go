// Package apply holds custody's end-to-end tests of apply's removal path:
// git's admin entries and registry, the scope apply reads once, and the
// recovery refs apply leaves, each driving the built binary in real git
// repositories. The quarantine's check is package quarantine's.
package apply

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
