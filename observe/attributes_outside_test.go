package observe_test

import (
	"context"
	"testing"

	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/internal/gitsandbox"
)

// TestAttributesFromOutside: every setting that makes git read attributes
// from somewhere other than the trees' own files sends plan to git status
// (attr.tree and GIT_ATTR_SOURCE among them: a later git reads a tree's
// .gitattributes from the commit they name); a repository with none of
// them lets it decide from the index alone. (Not parallel: it sets the
// environment git inherits.)
func TestAttributesFromOutside(t *testing.T) {
	s := gitsandbox.NewSandbox(t)
	dir := s.NewOrigin()
	repo := s.Discover(dir)
	// No global or system attributes file: the answer is the repository's.
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("GIT_ATTR_NOSYSTEM", "1")
	t.Setenv("GIT_ATTR_SOURCE", "")
	outside := func() bool { return observe.AttributesFromOutside(context.Background(), s.G, repo) }
	if outside() {
		t.Fatal("a repository whose attributes are all its trees' own: attributes from outside")
	}
	for _, c := range []struct{ key, value string }{
		{"core.attributesFile", "/elsewhere/attributes"},
		{"attr.tree", "HEAD"},
		{"attr.someLaterSetting", "x"},
		{"includeIf.gitdir:/somewhere/.path", "/elsewhere/config"},
		{"extensions.partialClone", "origin"},
	} {
		s.Git(dir, "config", c.key, c.value)
		if !outside() {
			t.Errorf("%s = %s: not attributes from outside", c.key, c.value)
		}
		s.Git(dir, "config", "--unset", c.key)
		if outside() {
			t.Fatalf("%s unset again: still attributes from outside", c.key)
		}
	}
	t.Setenv("GIT_ATTR_SOURCE", "HEAD")
	if !outside() {
		t.Error("GIT_ATTR_SOURCE set: not attributes from outside")
	}
}
