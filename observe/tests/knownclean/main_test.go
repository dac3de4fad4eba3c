// Package knownclean holds the tests that hold observe's known-clean fast
// path (a tree proved byte for byte its HEAD from the index's stat data,
// without git status) and list's glance (observe.Glance) to what git
// status says, over every content and hazard case of fixtures. They live in a package of their own, beside
// observe's other tests, so that neither package's tests need more of a
// busy machine than go test's package timeout allows.
package knownclean

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/observe/internal/gitsandbox"
)

// TestMain runs the tests with git pinned and the sandbox's templates
// built (gitsandbox.RunMain).
func TestMain(m *testing.M) {
	os.Exit(gitsandbox.RunMain(m, nil))
}
