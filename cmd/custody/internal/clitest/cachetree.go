package clitest

// Index surgery: an index whose cache tree hides what is staged, for the
// known-clean fast path's tests.

import (
	"bytes"
	"crypto/sha1"
	"os"
	"path/filepath"
	"testing"

	"github.com/custody-sh/custody/fixtures"
)

// WriteMode writes b to p with mode, making p's directory first.
func WriteMode(t *testing.T, p string, b []byte, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, mode); err != nil {
		t.Fatal(err)
	}
}

// LyingCacheTree stages other bytes of d/x.txt (the blob written, the file
// rewritten) in an index whose cache tree still names HEAD's tree: git's
// index-to-HEAD comparison trusts the cache tree and reports nothing staged.
func LyingCacheTree(t *testing.T, r *fixtures.Repo, id, path string) {
	StageBehindCacheTree(t, r, id, path, "d/x.txt", true)
}

// StageBehindCacheTree stages other bytes of rel, as long as HEAD's, in
// the index as they are written to disk, leaving the cache tree as it was;
// hidden says git status then reports nothing.
func StageBehindCacheTree(t *testing.T, r *fixtures.Repo, id, path, rel string, hidden bool) {
	t.Helper()
	idx := filepath.Join(r.Dir, ".git", "worktrees", id, "index")
	b, err := os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte("TREE")) {
		t.Fatal("the index has no cache tree")
	}
	oldHex := r.GitIn(path, "rev-parse", ":"+rel)
	head, err := os.ReadFile(filepath.Join(path, rel))
	if err != nil {
		t.Fatal(err)
	}
	staged := bytes.Repeat([]byte("S"), len(head)-1) // as long as HEAD's: git rehashes it
	WriteMode(t, filepath.Join(path, rel), append(staged, '\n'), 0o644)
	newHex := r.GitIn(path, "hash-object", "-w", rel)
	oldID, newID := Unhex(t, oldHex), Unhex(t, newHex)
	if bytes.Count(b, oldID) != 1 {
		t.Fatalf("blob %s is not once in the index", oldHex)
	}
	body := bytes.Replace(b[:len(b)-sha1.Size], oldID, newID, 1)
	sum := sha1.Sum(body)
	WriteMode(t, idx, append(body, sum[:]...), 0o644)
	if st := r.GitIn(path, "status", "--porcelain=v2", "--untracked-files=all", "--ignored=matching"); (st == "") != hidden {
		t.Fatalf("git status, with the staged change hidden %v:\n%s", hidden, st)
	}
}

// Unhex decodes the hex string h, failing the test when it is not hex.
func Unhex(t *testing.T, h string) []byte {
	t.Helper()
	out := make([]byte, len(h)/2)
	for i := range out {
		var v byte
		for _, c := range []byte(h[2*i : 2*i+2]) {
			switch {
			case c >= '0' && c <= '9':
				v = v<<4 | (c - '0')
			case c >= 'a' && c <= 'f':
				v = v<<4 | (c - 'a' + 10)
			default:
				t.Fatalf("%q is not a hex id", h)
			}
		}
		out[i] = v
	}
	return out
}
