//go:build unix

package advice

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

var update = flag.Bool("update", false, "rewrite the files a failing cmp in testdata/script compares against")

// TestScripts runs this package's scripts (clitest.RunScripts).
func TestScripts(t *testing.T) {
	t.Parallel()
	clitest.RunScripts(t, filepath.Join("testdata", "script"), *update)
}
