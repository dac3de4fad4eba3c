// Package migrate holds custody's end-to-end tests of migrate (custody migrate plan and apply: adopting another tool's worktrees), each driving
// the built binary in real git repositories.
package migrate

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
