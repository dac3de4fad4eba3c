package gitfiles

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/internal/realgit"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestParseWorktreeList(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   []byte
		want []WorktreeEntry
	}{
		{name: "empty", in: nil, want: nil},
		{
			name: "main on a branch",
			in:   realgit.NulLines("worktree /r", "HEAD "+realgit.FixOID1, "branch refs/heads/main", ""),
			want: []WorktreeEntry{{Path: "/r", Head: realgit.FixOID1, Branch: "refs/heads/main"}},
		},
		{
			// The example of git-worktree(1), PORCELAIN FORMAT, with -z.
			name: "documentation example",
			in: realgit.NulLines(
				"worktree /path/to/bare-source", "bare", "",
				"worktree /path/to/linked-worktree", "HEAD abcd1234abcd1234abcd1234abcd1234abcd1234", "branch refs/heads/master", "",
				"worktree /path/to/other-linked-worktree", "HEAD 1234abc1234abc1234abc1234abc1234abc1234a", "detached", "",
				"worktree /path/to/linked-worktree-locked-no-reason", "HEAD 5678abc5678abc5678abc5678abc5678abc5678c", "branch refs/heads/locked-no-reason", "locked", "",
				"worktree /path/to/linked-worktree-locked-with-reason", "HEAD 3456def3456def3456def3456def3456def3456b", "branch refs/heads/locked-with-reason", "locked reason why is locked", "",
				"worktree /path/to/linked-worktree-prunable", "HEAD 1233def1234def1234def1234def1234def1234b", "detached", "prunable gitdir file points to non-existent location", "",
			),
			want: []WorktreeEntry{
				{Path: "/path/to/bare-source", Bare: true},
				{Path: "/path/to/linked-worktree", Head: "abcd1234abcd1234abcd1234abcd1234abcd1234", Branch: "refs/heads/master"},
				{Path: "/path/to/other-linked-worktree", Head: "1234abc1234abc1234abc1234abc1234abc1234a", Detached: true},
				{Path: "/path/to/linked-worktree-locked-no-reason", Head: "5678abc5678abc5678abc5678abc5678abc5678c", Branch: "refs/heads/locked-no-reason", Locked: true},
				{Path: "/path/to/linked-worktree-locked-with-reason", Head: "3456def3456def3456def3456def3456def3456b", Branch: "refs/heads/locked-with-reason", Locked: true, LockReason: "reason why is locked"},
				{Path: "/path/to/linked-worktree-prunable", Head: "1233def1234def1234def1234def1234def1234b", Detached: true, Prunable: true, PrunableReason: "gitdir file points to non-existent location"},
			},
		},
		{
			name: "unusual paths and reasons are raw",
			in: realgit.NulLines(
				"worktree /t/wt ä", "HEAD "+realgit.FixOID1, "branch refs/heads/feat", "",
				"worktree /t/nl\nx", "HEAD "+realgit.FixOID1, "detached", "locked on usb\ndisk  ", "",
				"worktree /t/trailing ", "HEAD "+realgit.FixOID1, "detached", "locked ", "",
			),
			want: []WorktreeEntry{
				{Path: "/t/wt ä", Head: realgit.FixOID1, Branch: "refs/heads/feat"},
				{Path: "/t/nl\nx", Head: realgit.FixOID1, Detached: true, Locked: true, LockReason: "on usb\ndisk  "},
				{Path: "/t/trailing ", Head: realgit.FixOID1, Detached: true, Locked: true},
			},
		},
		{
			name: "unborn branch and sha256",
			in: realgit.NulLines(
				"worktree /e", "HEAD "+realgit.FixOIDZero, "branch refs/heads/main", "",
				"worktree /s", "HEAD "+realgit.FixOID256, "branch refs/heads/main", "",
			),
			want: []WorktreeEntry{
				{Path: "/e", Head: realgit.FixOIDZero, Branch: "refs/heads/main"},
				{Path: "/s", Head: realgit.FixOID256, Branch: "refs/heads/main"},
			},
		},
		{
			name: "unknown attributes are ignored",
			in:   realgit.NulLines("worktree /r", "HEAD "+realgit.FixOID1, "future thing", "branch refs/heads/main", "flag", "future thing", ""),
			want: []WorktreeEntry{{Path: "/r", Head: realgit.FixOID1, Branch: "refs/heads/main"}},
		},
		{
			// git prints neither detached nor branch when HEAD names no
			// branch it can resolve; keep the entry.
			name: "neither branch nor detached",
			in:   realgit.NulLines("worktree /r", "HEAD "+realgit.FixOID1, ""),
			want: []WorktreeEntry{{Path: "/r", Head: realgit.FixOID1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseWorktreeList(tt.in)
			if err != nil {
				t.Fatalf("ParseWorktreeList: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseWorktreeList (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseWorktreeListMalformed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		in     []byte
		offset string // "byte N" the error must name
	}{
		{"no worktree line", realgit.NulLines("HEAD "+realgit.FixOID1, "branch refs/heads/main", ""), "byte 0:"},
		{"empty record", realgit.NulLines(""), "byte 0:"},
		{"empty record after one", append(realgit.NulLines("worktree /r", "bare", ""), 0), "byte 18:"},
		{"worktree without path", realgit.NulLines("worktree", "bare", ""), "byte 0:"},
		{"worktree with empty path", realgit.NulLines("worktree ", "bare", ""), "byte 0:"},
		{"short HEAD", realgit.NulLines("worktree /r", "HEAD abc", ""), "byte 12:"},
		{"uppercase HEAD", realgit.NulLines("worktree /r", "HEAD "+strings.ToUpper(realgit.FixOID1), ""), "byte 12:"},
		{"HEAD without value", realgit.NulLines("worktree /r", "HEAD", ""), "byte 12:"},
		{"HEAD with trailing space", realgit.NulLines("worktree /r", "HEAD "+realgit.FixOID1+" ", ""), "byte 12:"},
		{"unterminated attribute", []byte("worktree /r\x00HEAD " + realgit.FixOID1), "byte 12:"},
		{"unterminated record", realgit.NulLines("worktree /r", "HEAD "+realgit.FixOID1), "byte 58:"},
		{"newline-terminated output", []byte("worktree /r\nHEAD " + realgit.FixOID1 + "\n\n"), "byte 0:"},
		{"missing record terminator", realgit.NulLines("worktree /a", "bare", "worktree /b", "bare", ""), "byte 17:"},
		{"repeated HEAD", realgit.NulLines("worktree /r", "HEAD "+realgit.FixOID1, "HEAD "+realgit.FixOID1, ""), "byte 58:"},
		{"branch without ref", realgit.NulLines("worktree /r", "HEAD "+realgit.FixOID1, "branch ", ""), "byte 58:"},
		{"bare with value", realgit.NulLines("worktree /r", "bare yes", ""), "byte 12:"},
		{"detached with value", realgit.NulLines("worktree /r", "HEAD "+realgit.FixOID1, "detached yes", ""), "byte 58:"},
		{"bare with HEAD", realgit.NulLines("worktree /r", "bare", "HEAD "+realgit.FixOID1, ""), "byte 0:"},
		{"non-bare without HEAD", realgit.NulLines("worktree /a", "bare", "", "worktree /r", "branch refs/heads/x", ""), "byte 18:"},
		{"detached on a branch", realgit.NulLines("worktree /r", "HEAD "+realgit.FixOID1, "detached", "branch refs/heads/x", ""), "byte 0:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseWorktreeList(tt.in)
			if !errors.Is(err, hostio.ErrMalformed) {
				t.Fatalf("ParseWorktreeList(%q) = %v, %v; want ErrMalformed", tt.in, got, err)
			}
			if got != nil {
				t.Errorf("entries returned with error: %v", got)
			}
			if !strings.Contains(err.Error(), tt.offset) {
				t.Errorf("error %q does not name %q", err, tt.offset)
			}
		})
	}
}

func TestParseWorktreeListRealGit(t *testing.T) {
	t.Parallel()
	g := realgit.NewParserGit(t)
	root := realgit.ParserRoot(t)
	repo := filepath.Join(root, "repo")
	g.Run(root, "init", "-q", "-b", "main", repo)
	realgit.WriteParserFile(t, filepath.Join(repo, "a.txt"), "a\n")
	g.Run(repo, "add", ".")
	g.Run(repo, "commit", "-q", "-m", "init")
	head := g.Rev(repo, "HEAD")

	spaced := filepath.Join(root, "wt ä")
	detached := filepath.Join(root, "det")
	lockedReason := filepath.Join(root, "locked reason")
	locked := filepath.Join(root, "locked")
	newline := filepath.Join(root, "nl\nx")
	gone := filepath.Join(root, "gone")
	lockedGone := filepath.Join(root, "locked-gone")
	g.Run(repo, "worktree", "add", "-q", "-b", "feat", spaced)
	g.Run(repo, "worktree", "add", "-q", "--detach", detached)
	g.Run(repo, "worktree", "add", "-q", "-b", "lr", lockedReason)
	g.Run(repo, "worktree", "lock", "--reason", "on usb\ndisk ä", lockedReason)
	g.Run(repo, "worktree", "add", "-q", "-b", "lk", locked)
	g.Run(repo, "worktree", "lock", locked)
	g.Run(repo, "worktree", "add", "-q", "-b", "nl", newline)
	g.Run(repo, "worktree", "add", "-q", "-b", "gone", gone)
	g.Run(repo, "worktree", "add", "-q", "-b", "lg", lockedGone)
	g.Run(repo, "worktree", "lock", lockedGone)
	for _, dir := range []string{gone, lockedGone} {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
	}

	got, err := ParseWorktreeList(g.Run(repo, "worktree", "list", "--porcelain", "-z"))
	if err != nil {
		t.Fatalf("ParseWorktreeList: %v", err)
	}
	// The reason text is git's message and may change between versions.
	for i := range got {
		if got[i].Prunable {
			if got[i].PrunableReason == "" {
				t.Errorf("%q: prunable without a reason", got[i].Path)
			}
			got[i].PrunableReason = "(reason)"
		}
	}
	want := []WorktreeEntry{
		{Path: repo, Head: head, Branch: "refs/heads/main"},
		{Path: spaced, Head: head, Branch: "refs/heads/feat"},
		{Path: detached, Head: head, Detached: true},
		{Path: lockedReason, Head: head, Branch: "refs/heads/lr", Locked: true, LockReason: "on usb\ndisk ä"},
		{Path: locked, Head: head, Branch: "refs/heads/lk", Locked: true},
		{Path: newline, Head: head, Branch: "refs/heads/nl"},
		{Path: gone, Head: head, Branch: "refs/heads/gone", Prunable: true, PrunableReason: "(reason)"},
		// Locked protects a missing worktree from pruning: not prunable.
		{Path: lockedGone, Head: head, Branch: "refs/heads/lg", Locked: true},
	}
	if len(got) == 0 || got[0].Path != repo {
		t.Fatalf("main worktree is not listed first: %+v", got)
	}
	byPath := cmpopts.SortSlices(func(a, b WorktreeEntry) bool { return a.Path < b.Path })
	if diff := cmp.Diff(want, got, byPath); diff != "" {
		t.Errorf("worktree list (-want +got):\n%s", diff)
	}

	// A bare clone lists itself as a bare entry, then its linked worktrees.
	bare := filepath.Join(root, "bare.git")
	g.Run(root, "clone", "-q", "--bare", repo, bare)
	fromBare := filepath.Join(root, "from bare")
	g.Run(bare, "worktree", "add", "-q", "--detach", fromBare, "main")
	got, err = ParseWorktreeList(g.Run(bare, "worktree", "list", "--porcelain", "-z"))
	if err != nil {
		t.Fatalf("ParseWorktreeList (bare): %v", err)
	}
	want = []WorktreeEntry{
		{Path: bare, Bare: true},
		{Path: fromBare, Head: head, Detached: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bare worktree list (-want +got):\n%s", diff)
	}

	// An unborn branch: git prints the all-zero object id.
	empty := filepath.Join(root, "empty")
	g.Run(root, "init", "-q", "-b", "main", empty)
	got, err = ParseWorktreeList(g.Run(empty, "worktree", "list", "--porcelain", "-z"))
	if err != nil {
		t.Fatalf("ParseWorktreeList (unborn): %v", err)
	}
	want = []WorktreeEntry{{Path: empty, Head: realgit.FixOIDZero, Branch: "refs/heads/main"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unborn worktree list (-want +got):\n%s", diff)
	}
}

func TestParseWorktreeListRealGitSHA256(t *testing.T) {
	t.Parallel()
	g := realgit.NewParserGit(t)
	root := realgit.ParserRoot(t)
	repo := filepath.Join(root, "s256")
	g.Run(root, "init", "-q", "-b", "main", "--object-format=sha256", repo)
	realgit.WriteParserFile(t, filepath.Join(repo, "x"), "x\n")
	g.Run(repo, "add", "x")
	g.Run(repo, "commit", "-q", "-m", "x")
	head := g.Rev(repo, "HEAD")
	if len(head) != 64 {
		t.Fatalf("sha256 HEAD %q", head)
	}
	got, err := ParseWorktreeList(g.Run(repo, "worktree", "list", "--porcelain", "-z"))
	if err != nil {
		t.Fatalf("ParseWorktreeList: %v", err)
	}
	want := []WorktreeEntry{{Path: repo, Head: head, Branch: "refs/heads/main"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sha256 worktree list (-want +got):\n%s", diff)
	}
}

// formatWorktreeList prints entries the way git does with -z.
func formatWorktreeList(entries []WorktreeEntry) []byte {
	var lines []string
	for _, e := range entries {
		lines = append(lines, "worktree "+e.Path)
		if e.Bare {
			lines = append(lines, "bare")
		} else {
			lines = append(lines, "HEAD "+e.Head)
			if e.Detached {
				lines = append(lines, "detached")
			} else if e.Branch != "" {
				lines = append(lines, "branch "+e.Branch)
			}
		}
		if e.Locked {
			if e.LockReason != "" {
				lines = append(lines, "locked "+e.LockReason)
			} else {
				lines = append(lines, "locked")
			}
		}
		if e.Prunable {
			if e.PrunableReason != "" {
				lines = append(lines, "prunable "+e.PrunableReason)
			} else {
				lines = append(lines, "prunable")
			}
		}
		lines = append(lines, "")
	}
	return realgit.NulLines(lines...)
}

func FuzzParseWorktreeList(f *testing.F) {
	f.Add([]byte{})
	f.Add(realgit.NulLines("worktree /r", "HEAD "+realgit.FixOID1, "branch refs/heads/main", ""))
	f.Add(realgit.NulLines("worktree /b", "bare", "", "worktree /w ä", "HEAD "+realgit.FixOID256, "detached", "locked", "prunable gone", ""))
	f.Add(realgit.NulLines("worktree /nl\nx", "HEAD "+realgit.FixOID2, "branch refs/heads/x", "locked on usb\ndisk", "future", ""))
	f.Add(realgit.NulLines("worktree /r", "HEAD "+realgit.FixOID1))
	f.Add(realgit.NulLines("HEAD "+realgit.FixOID1, ""))
	f.Add([]byte("worktree /r\nHEAD " + realgit.FixOID1 + "\n\n"))
	f.Add(realgit.NulLines("worktree /r", "HEAD abc", ""))
	f.Add(realgit.NulLines("", ""))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := ParseWorktreeList(b)
		if err != nil {
			if !errors.Is(err, hostio.ErrMalformed) {
				t.Fatalf("error does not wrap ErrMalformed: %v", err)
			}
			if got != nil {
				t.Fatalf("entries returned with error: %v", got)
			}
			return
		}
		for _, e := range got {
			switch {
			case e.Path == "":
				t.Fatalf("entry without a path: %+v", e)
			case e.Bare && (e.Head != "" || e.Branch != "" || e.Detached):
				t.Fatalf("bare entry with HEAD state: %+v", e)
			case !e.Bare && !hostio.IsHexOID(e.Head):
				t.Fatalf("non-bare entry with bad HEAD: %+v", e)
			case e.Detached && e.Branch != "":
				t.Fatalf("detached entry on a branch: %+v", e)
			case e.LockReason != "" && !e.Locked:
				t.Fatalf("lock reason without lock: %+v", e)
			case e.PrunableReason != "" && !e.Prunable:
				t.Fatalf("prune reason without prunable: %+v", e)
			}
		}
		// What parsed must print back to something that parses the same.
		again, err := ParseWorktreeList(formatWorktreeList(got))
		if err != nil {
			t.Fatalf("reparse of %+v: %v", got, err)
		}
		if diff := cmp.Diff(got, again); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}
