// Package content holds custody's end-to-end tests of content accounting:
// whatever git status says, a tree holding bytes or modes its HEAD lacks
// (at plan, after plan, behind a warm content hash cache) or content that
// cannot be read is kept, each driving the built binary in real git
// repositories. The rest of what plan observes is package plan's.
package content

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
