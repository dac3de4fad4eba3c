package clitest

import (
	"testing"

	"github.com/custody-sh/custody/fixtures"
)

// WriteTrusted writes custody.toml into r's main checkout and approves
// that exact content with custody trust, as the person who wrote it would.
func WriteTrusted(t testing.TB, r *fixtures.Repo, toml string) {
	t.Helper()
	r.WriteFile(r.Dir, "custody.toml", toml)
	MustCustody(t, r, 0, "trust")
}
