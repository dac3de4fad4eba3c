// Package knownclean holds custody's end-to-end tests of plan's fast path
// for a finished tree that is exactly its HEAD (decision 0185): over trees
// in every state next to it, plan observes each as git status would and
// apply carries out every removal plan proposes, each driving the built
// binary in real git repositories.
package knownclean

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
