// Package state holds custody's end-to-end tests of the state file: a
// damaged or unusual state file, doctor, resume after a crash, and taking
// over a lock a dead custody held, each driving the built binary in real
// git repositories. A repository on a read-only file system is package
// readonly's.
package state

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
