package observe_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/internal/gitsandbox"
)

// TestAncestorsMatchesMergeBase: one batched rev-list answers, for every
// head, exactly what `git merge-base --is-ancestor HEAD TIP` answers: the
// tip itself and its ancestors yes; a commit on a side branch, a descendant
// of the tip, and a commit on a later main no. Repeated and malformed heads
// are harmless, and an unknown object is an error (each tree then asks for
// itself).
func TestAncestorsMatchesMergeBase(t *testing.T) {
	t.Parallel()
	s := gitsandbox.NewSandbox(t)
	main := s.NewOrigin()
	old := s.Rev(main, "HEAD")
	tip := s.CommitFile(main, "t.txt", "tip\n")
	later := s.CommitFile(main, "l.txt", "later\n")
	s.Git(main, "checkout", "-q", "-b", "side", old)
	side := s.CommitFile(main, "s.txt", "side\n")
	repo := s.Discover(main)
	heads := []string{old, tip, later, side, old, "not-a-commit"}
	got, err := observe.Ancestors(context.Background(), s.G, repo, tip, heads)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, h := range []string{old, tip, later, side} {
		if _, err := s.TryGit(main, "merge-base", "--is-ancestor", h, tip); err == nil {
			want[h] = true
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ancestors of %s (-merge-base +batched):\n%s", tip, diff)
	}
	if !got[old] || got[side] {
		t.Fatalf("fixture wrong: %v", got)
	}
	if _, err := observe.Ancestors(context.Background(), s.G, repo, tip, []string{"1234567890123456789012345678901234567890"}); err == nil {
		t.Error("an unknown head: no error")
	}
}
