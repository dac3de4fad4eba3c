// Package migrate holds custody's end-to-end tests of custody migrate
// (discover, plan, dispose, apply: bringing worktrees custody did not make
// into its custody), each driving the built binary in real git
// repositories, and an apply killed after it acted whose tree is edited
// before the next run. The kills at every failpoint and at random instants
// are package migratecrash's.
package migrate

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
