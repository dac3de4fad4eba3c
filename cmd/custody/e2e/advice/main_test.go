// Package advice holds custody's end-to-end test that its advice works:
// for every refusal code, the retry custody prints is pasted into a shell
// as it is and must succeed without the same advice coming round again,
// each driving the built binary in real git repositories.
package advice

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
