// Package plan holds custody's end-to-end tests of what plan observes and
// keeps: the hazard tables of package fixtures, git's work per tree, and
// remotes' URLs in the commands plan prints, each driving the built binary
// in real git repositories. Content accounting is package content's; the
// known-clean fast path, package knownclean's.
package plan

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
