// Package vanished holds custody's end-to-end tests of trees deleted
// outside custody: their records settle whatever their state, and their
// resources are destroyed exactly once, each driving the built binary in
// real git repositories against real external commands.
package vanished

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
