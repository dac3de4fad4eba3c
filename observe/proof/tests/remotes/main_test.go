// Package remotes holds the tests of observe/proof's reading of remotes:
// the advertisement (Advertise: which remotes, their URLs and push
// targets, what answers and what fails, a shallow clone, a remote that is
// this repository itself) that every proof is searched against. They
// live beside the proof search's own tests in a package of their own so
// that neither package's tests need more of a busy machine than go
// test's package timeout allows.
package remotes

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
