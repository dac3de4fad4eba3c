package clitest

// Archives made by the binary.

import (
	"testing"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/steps/archive"
)

// CreateArchive archives id and returns what create printed.
func CreateArchive(t *testing.T, r *fixtures.Repo, id string) archive.ArchiveCreated {
	t.Helper()
	return DecodeResult[archive.ArchiveCreated](t, MustCustody(t, r, 0, "--json", "archive", "create", id), "archive create")
}

// Archived makes an archived tree and returns the repository, the tree
// and the archive.
func Archived(t *testing.T) (*fixtures.Repo, string, archive.ArchiveCreated) {
	t.Helper()
	r := InitSpacedRepo(t, fixtures.Options{})
	id, wt := NewTree(t, r, "spike")
	r.Commit(wt, "a.txt", "one\n")
	r.Commit(wt, "b.txt", "two\n")
	r.WriteFile(wt, "untracked.txt", "only here\n")
	return r, wt, CreateArchive(t, r, id)
}
