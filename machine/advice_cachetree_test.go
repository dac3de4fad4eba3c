package machine

import "testing"

// TestStaleCacheTreeRetry: the retry for a stale cache tree writes again
// the entries of the directory refused (a literal pathspec, relative to
// the tree, quoted), or of the whole index when the refusal is about the
// tree itself.
func TestStaleCacheTreeRetry(t *testing.T) {
	t.Parallel()
	tree := "/r/my trees/t"
	for _, c := range []struct {
		path, want string
	}{
		{tree + "/d/e", "git -C '/r/my trees/t' --literal-pathspecs ls-files -s -z -- d/e | git -C '/r/my trees/t' update-index -z --index-info"},
		{tree + "/a dir", "git -C '/r/my trees/t' --literal-pathspecs ls-files -s -z -- 'a dir' | git -C '/r/my trees/t' update-index -z --index-info"},
		{tree, "git -C '/r/my trees/t' --literal-pathspecs ls-files -s -z | git -C '/r/my trees/t' update-index -z --index-info"},
	} {
		if got := hiddenRetry(tree, "t", Hidden{Code: CodeStaleCacheTree, Path: c.path}); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.path, got, c.want)
		}
	}
}
