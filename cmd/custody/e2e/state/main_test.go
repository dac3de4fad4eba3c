// Package state holds custody's end-to-end tests of the state file: a
// damaged, read-only or older state file, doctor, resume after a crash,
// and taking over a lock a dead custody held, each driving the built
// binary in real git repositories.
package state

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
