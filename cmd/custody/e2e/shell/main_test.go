// Package shell holds custody's end-to-end tests in the shells people
// type it into: the function custody shell-init prints, loaded in bash,
// zsh and fish, changing into trees whose paths hold spaces, quotes,
// newlines and bytes that are not UTF-8, and completion offering tree ids,
// branches and archive names, each driving the built binary in real git
// repositories.
package shell

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
