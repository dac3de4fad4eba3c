package sweep

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/fixtures/testsize"
)

// TestMain runs the tests as every test package of the module does
// (testsize.Main): temporary directories in memory where /tmp is a disk.
func TestMain(m *testing.M) {
	os.Exit(testsize.Main(m))
}
