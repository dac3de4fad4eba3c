package clitest

import (
	"testing"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/steps"
)

// CreateArchive archives id and returns what create printed.
func CreateArchive(t *testing.T, r *fixtures.Repo, id string) steps.ArchiveCreated {
	t.Helper()
	return DecodeResult[steps.ArchiveCreated](t, MustCustody(t, r, 0, "--json", "archive", "create", id), "archive create")
}
