package gitfiles

import "testing"

// TestValidTreePath: a path git writes in a tree is relative, with no
// empty, "." or ".." component.
func TestValidTreePath(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]bool{
		"a": true, "a/b": true, "a/b/c.txt": true, ".a/..b/...": true,
		"": false, "/a": false, "a/": false, "a//b": false, "./a": false, "a/./b": false, "a/..": false, "..": false, ".": false,
	} {
		if got := validTreePath(p); got != want {
			t.Errorf("validTreePath(%q) = %v, want %v", p, got, want)
		}
	}
}
