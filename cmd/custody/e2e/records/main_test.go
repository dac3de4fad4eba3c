// Package records holds custody's end-to-end tests of records and their
// names: custody new, show and list, names that are bytes beyond UTF-8 or
// span pages, redaction, .env files, gitdir links, and custody.toml's
// trust and injection checks, each driving the built binary in real git
// repositories.
package records

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}
