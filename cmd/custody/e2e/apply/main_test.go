// Package apply holds custody's end-to-end tests of apply, each driving
// the built binary in real git repositories.
package apply

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
