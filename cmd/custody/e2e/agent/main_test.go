// Package agent holds custody's end-to-end tests of what coding agents
// run: the hooks and their leases, custody integrate claude and codex,
// codex's setup and teardown scripts, and the commands custody prints for
// a person to paste, each driving the built binary in real git
// repositories.
package agent

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
