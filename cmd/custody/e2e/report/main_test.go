// Package report holds custody's end-to-end tests of custody journal
// report: a realistic history, its golden screenshot, a tampered journal
// and the offline check, each driving the built binary in real git
// repositories.
package report

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
