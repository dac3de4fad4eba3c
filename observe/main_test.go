package observe_test

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/observe/internal/gitsandbox"
)

// TestMain runs the tests with git pinned to an empty home and the
// sandbox's templates built (gitsandbox.RunMain).
func TestMain(m *testing.M) {
	os.Exit(gitsandbox.RunMain(m, nil))
}
