//go:build unix

package steps_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/proof"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/quarantine"
	"github.com/custody-sh/custody/store"
)

// rtEnv is the workflow environment of r as a command builds it, with
// archives as its archive feature.
func rtEnv(t *testing.T, r *fixtures.Repo, archives steps.Archives) *steps.Env {
	t.Helper()
	ctx := context.Background()
	g := hostio.NewGit(&hostio.Runner{})
	repo, err := gitfiles.Discover(ctx, g, r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg, src, err := observe.ReadConfig(repo)
	if err != nil {
		t.Fatal(err)
	}
	root, err := steps.ResolveRoot(repo, cfg.Root)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenContext(ctx, steps.StatePath(repo), 5*time.Second, true)
	if err != nil {
		t.Fatal(err)
	}
	return &steps.Env{Repo: repo, Git: g, Store: st, Policy: cfg.Policy(), Config: cfg, ConfigSource: src,
		Root: root, Now: time.Now, Actor: "test", Holder: steps.Self(), Wait: time.Second, Archives: archives}
}

// fakeArchives is an archive feature that proves nothing and answers a
// capture with refusal, counting the captures asked for.
type fakeArchives struct {
	captured []string
	refusal  *machine.Refusal
}

func (f *fakeArchives) Proof(context.Context, *steps.Env, machine.Record, string, *proof.RemoteView) (*machine.Proof, *machine.Refusal, error) {
	return nil, nil, nil
}
func (f *fakeArchives) Archived(*steps.Env) map[string]bool { return map[string]bool{} }
func (f *fakeArchives) Contents(context.Context, *steps.Env, *machine.Proof) (quarantine.Manifest, error) {
	return nil, errors.New("no contents")
}
func (f *fakeArchives) SoleCopy(context.Context, *steps.Env, machine.Record) error { return nil }
func (f *fakeArchives) Capture(_ context.Context, _ *steps.Env, id string) (steps.CapturedArchive, error) {
	f.captured = append(f.captured, id)
	return steps.CapturedArchive{}, f.refusal
}

// TestRetire: Retire of a record by id removes a tree whose work is
// published, reporting the plan's proof and the branch it deleted; run
// again it is already-done (the record is tombstoned). A tree holding an
// unpushed commit is kept with its reason and is active again; an unknown
// id is an unknown-record refusal that names nothing.
func TestRetire(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := fixtures.New(t, fixtures.Options{})
	e := rtEnv(t, r, nil)
	mk := func(name string) steps.NewResult {
		t.Helper()
		res, err := steps.New(ctx, e, name, "", r.Dir)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	safe, unpushed := mk("safe"), mk("unpushed")
	head := r.Commit(safe.Path, "done.txt", "published\n")
	r.Push(safe.Path, safe.Branch)
	r.Commit(unpushed.Path, "wip.txt", "only here\n")

	res, err := steps.Retire(ctx, e, safe.ID, steps.RetireOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Gone() || res.Kept || res.Removal.Outcome != machine.OutcomeRemoved || res.Action != machine.ActionRemove {
		t.Fatalf("the published tree: %+v, want removed", res)
	}
	if res.Proof == nil || res.Proof.Head != head || res.Branch != safe.Branch {
		t.Errorf("the published tree's proof %+v and branch %q, want a proof of %s and %s", res.Proof, res.Branch, head, safe.Branch)
	}
	if b := res.Removal.Branch; b == nil || b.Outcome != machine.BranchDeleted || b.Commit != head {
		t.Errorf("the published tree's branch: %+v, want deleted at %s", b, head)
	}
	if _, err := os.Lstat(safe.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the published tree is still there (%v)", err)
	}
	again, err := steps.Retire(ctx, e, safe.ID, steps.RetireOptions{})
	if err != nil || !again.Gone() || again.Removal.Outcome != machine.OutcomeAlreadyDone {
		t.Errorf("retired again: %+v %v, want already-done", again, err)
	}

	kept, err := steps.Retire(ctx, e, unpushed.ID, steps.RetireOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if kept.Gone() || !kept.Kept || kept.Refusal == nil || !hasCode(kept.Refusals, machine.CodeUnpushedCommits) || kept.State != machine.StateActive {
		t.Errorf("the unpushed tree: %+v, want kept [unpushed-commits], active again", kept)
	}
	if rec, err := e.Store.Get(unpushed.ID); err != nil || rec.State != machine.StateActive {
		t.Errorf("the unpushed tree's record is %v (%v), want active", rec.State, err)
	}

	_, err = steps.Retire(ctx, e, "nosuch-123456", steps.RetireOptions{})
	var ref *machine.Refusal
	if !errors.As(err, &ref) || ref.Code != machine.CodeUnknownRecord {
		t.Errorf("an unknown id: %v, want unknown-record", err)
	}
}

// TestRetireArchive: with Archive set, Retire asks the archive feature for
// a capture only for a tree kept for reasons an archive answers (an
// untracked file), never for one a remote proves or a live lease keeps;
// a capture that is refused keeps the tree, active again, with the
// capture's refusal first and the plan's reasons after it.
func TestRetireArchive(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := fixtures.New(t, fixtures.Options{})
	unsupported := &machine.Refusal{Code: machine.CodeArchiveUnsupported, Message: "a socket", Retry: "custody plan"}
	fake := &fakeArchives{refusal: unsupported}
	e := rtEnv(t, r, fake)
	mk := func(name string) steps.NewResult {
		t.Helper()
		res, err := steps.New(ctx, e, name, "", r.Dir)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	clean, dirty, leased := mk("clean"), mk("dirty"), mk("leased")
	r.WriteFile(dirty.Path, "notes.txt", "only here\n")
	r.WriteFile(leased.Path, "notes.txt", "only here\n")
	req := machine.LeaseRequest{Op: machine.LeaseAcquire, Session: "s-1", Now: time.Now().UTC(), Duration: time.Hour}
	if _, err := e.Store.ChangeLease(store.LeaseChange{Path: leased.Path, Key: leased.ID, Request: req, Actor: "test"}); err != nil {
		t.Fatal(err)
	}
	opts := steps.RetireOptions{Archive: true}

	if res, err := steps.Retire(ctx, e, clean.ID, opts); err != nil || !res.Gone() || res.Archive != nil {
		t.Errorf("a tree a remote proves: %+v %v, want removed without an archive", res, err)
	}
	if res, err := steps.Retire(ctx, e, leased.ID, opts); err != nil || !res.Kept || res.Refusal.Code != machine.CodeLeaseLive {
		t.Errorf("a leased tree: %+v %v, want kept [lease-live]", res, err)
	}
	if len(fake.captured) != 0 {
		t.Errorf("captured %v before the tree that needs one", fake.captured)
	}
	res, err := steps.Retire(ctx, e, dirty.ID, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(fake.captured) != 1 || fake.captured[0] != dirty.ID {
		t.Errorf("captured %v, want %s alone", fake.captured, dirty.ID)
	}
	if !res.Kept || res.Refusal == nil || res.Refusal.Code != machine.CodeArchiveUnsupported || !hasCode(res.Refusals, machine.CodeUntrackedFiles) ||
		res.Archive != nil || res.State != machine.StateActive {
		t.Errorf("a tree whose capture is refused: %+v, want kept [archive-unsupported] with [untracked-files], active again", res)
	}
	if _, err := os.Stat(dirty.Path + "/notes.txt"); err != nil {
		t.Errorf("the kept tree lost its file: %v", err)
	}
}

// hasCode reports whether rs holds a refusal with code.
func hasCode(rs []machine.Refusal, code machine.Code) bool {
	for _, r := range rs {
		if r.Code == code {
			return true
		}
	}
	return false
}
