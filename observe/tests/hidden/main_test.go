// Package hidden holds the tests of observe.HiddenState: what git status
// does not report but a removal would destroy (skip-worktree and
// assume-unchanged entries, staged content, nested repositories,
// per-worktree refs, operations in progress, submodules with changes or
// unpushed commits). They live in a package of their own, beside
// observe's other tests, so that neither package's tests need more of a
// busy machine than go test's package timeout allows.
package hidden

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
