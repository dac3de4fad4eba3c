// Package report holds custody's end-to-end tests of the journal report, each driving
// the built binary in real git repositories.
package report

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
