package clitest

import (
	"strings"
	"testing"

	"github.com/custody-sh/custody/fixtures"
)

// MergedTree makes a tree whose one commit is pushed to branch on origin,
// and finishes it.
func MergedTree(t testing.TB, r *fixtures.Repo, name, branch string) (id, path string) {
	t.Helper()
	id, path = NewTree(t, r, name)
	r.Commit(path, name+".txt", "work of "+name+"\n")
	r.Push(path, branch)
	FinishAll(t, r, id)
	return id, path
}

// DropRefLine removes the line naming ref from a Refs listing.
func DropRefLine(refs, ref string) string {
	var out []string
	for _, l := range strings.Split(refs, "\n") {
		if !strings.HasSuffix(l, " "+ref) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
