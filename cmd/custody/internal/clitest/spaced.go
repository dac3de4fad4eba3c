package clitest

import (
	"testing"

	"github.com/custody-sh/custody/fixtures"
)

// SpacedRepoName has a space, so a retry that names a path without quoting it
// (machine.QuoteArg) shows as an unquoted path.
const SpacedRepoName = "my repo"

// InitSpacedRepo makes a repository with custody initialized in it.
func InitSpacedRepo(t *testing.T, opt fixtures.Options) *fixtures.Repo {
	t.Helper()
	if opt.Name == "" {
		opt.Name = SpacedRepoName
	}
	r := fixtures.New(t, opt)
	MustCustody(t, r, 0, "init")
	return r
}
