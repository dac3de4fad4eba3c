// Package resource holds custody's end-to-end tests of resources, each driving
// the built binary in real git repositories.
package resource

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
