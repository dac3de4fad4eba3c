// Package deadline holds custody's end-to-end tests of deadlines and
// signals: every process custody starts ends at its deadline with what it
// started, a signal ends a command waiting on a lock, a hook or a filter,
// and resume ends the resource commands a killed custody left running,
// each driving the built binary in real git repositories.
package deadline

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
