package main

import (
	"testing"

	"github.com/custody-sh/custody/fixtures"
)

// writeTrusted writes custody.toml into r's main checkout and approves
// that exact content with custody trust, as the person who wrote it would.
func writeTrusted(t testing.TB, r *fixtures.Repo, toml string) {
	t.Helper()
	r.WriteFile(r.Dir, "custody.toml", toml)
	mustCustody(t, r, 0, "trust")
}
