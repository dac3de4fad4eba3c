// Package histories holds the tests of observe/proof's proof search over
// awkward histories: tag objects, merges and roots on a tip, shallow
// clones, replace refs and grafts, SHA-256 repositories, many advertised
// tips, pull heads, squashes edited afterwards, awkward paths and proofs
// searched concurrently on one view. They live beside the package's own
// tests in a package of their own so that neither package's tests need
// more of a busy machine than go test's package timeout allows.
package histories

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/observe/internal/gitsandbox"
)

// TestMain runs the tests with git pinned and the origin template built
// (gitsandbox.RunMain).
func TestMain(m *testing.M) {
	os.Exit(gitsandbox.RunMain(m, nil))
}
