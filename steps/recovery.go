package steps

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/safefile"
	"github.com/custody-sh/custody/store"
)

// RecoveredRefPrefix is where custody keeps commits that would otherwise
// die with a removed tree: refs/custody/recovered/<id>/<commit>.
const RecoveredRefPrefix = "refs/custody/recovered/"

// EventRecovered names the journal event of a preservation, and
// EventRecoveredPruned that of a prune (defined in machine, which the
// report reads them with).
const (
	EventRecovered       = machine.EventRecovered
	EventRecoveredPruned = machine.EventRecoveredPruned
)

// RecoveredRef is one commit kept under a recovery ref (machine's).
type RecoveredRef = machine.RecoveredRef

// RecoveredDetail is the detail of a "recovered" journal event: the refs
// made and the files written for one record's removal (machine's).
type RecoveredDetail = machine.RecoveredDetail

// RecoveredDir is where custody keeps files that would die with tree id:
// <common>/custody/recovered/<id>.
func RecoveredDir(repo observe.Repo, id string) string {
	return filepath.Join(repo.StateDir(), "recovered", id)
}

// preserveWhatDies keeps what `git worktree remove` (and the branch
// deletion after it) would destroy with rec's tree: every commit named by
// the tree's HEAD reflog or its branch's reflog, and the branch tip itself,
// that no other ref reaches gets a recovery ref; a non-empty
// config.worktree is copied under RecoveredDir. It is idempotent (what an
// earlier run kept is reachable and is not kept again) and journals what
// it made, and returns the recovery refs it wrote. A refusal means the tree
// must stay.
func preserveWhatDies(ctx context.Context, e *Env, rec machine.Record) ([]RecoveredRef, *machine.Refusal, error) {
	in := rec.Intent
	key := in.AdminKey
	if key == "" {
		key = rec.AdminKey
	}
	var detail RecoveredDetail
	var cands []string
	if key != "" && key == filepath.Base(key) && key != "." && key != ".." {
		admin := e.Repo.AdminDir(key)
		c, r := reflogCommits(filepath.Join(admin, "logs", "HEAD"))
		if r != nil {
			return nil, r, nil
		}
		cands = append(cands, c...)
		file, r, err := keepWorktreeConfig(e, rec.ID, filepath.Join(admin, "config.worktree"))
		if r != nil || err != nil {
			return nil, r, err
		}
		if file != "" {
			detail.Files = append(detail.Files, file)
		}
	}
	if rec.Branch != "" {
		c, r := reflogCommits(filepath.Join(e.Repo.CommonDir, "logs", "refs", "heads", filepath.FromSlash(rec.Branch)))
		if r != nil {
			return nil, r, nil
		}
		cands = append(cands, c...)
	}
	if machine.IsFullCommit(in.Commit) {
		cands = append(cands, in.Commit)
	}
	refs, err := keepUnreachable(ctx, e, rec, dedupe(cands))
	if err != nil {
		return nil, nil, err
	}
	detail.Refs = refs
	if len(detail.Refs) == 0 && len(detail.Files) == 0 {
		return nil, nil, nil
	}
	if err := e.Store.AppendEvent(store.Event{Record: rec.ID, Kind: machine.KindWorktree, Event: EventRecovered,
		At: e.Now().UTC(), Detail: detail, Actor: e.Actor}); err != nil {
		return nil, nil, fmt.Errorf("journal recovery of %s: %w", rec.ID, err)
	}
	return detail.Refs, nil, nil
}

// reflogLimit bounds what custody reads of one reflog: a larger one keeps
// the tree (it cannot be read whole) rather than being read in part.
const reflogLimit = 256 << 20

// reflogCommits reads every commit id a reflog file names (old and new
// values). A missing file names none; one that cannot be read, or is not a
// regular file, is a refusal: what it holds is unknown.

func reflogCommits(path string) ([]string, *machine.Refusal) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	unreadable := func(why string) *machine.Refusal {
		return &machine.Refusal{Code: machine.CodeRecoveryFailed, Path: path, Retry: "custody resume",
			Message: fmt.Sprintf("the reflog %s cannot be read (%s), so custody cannot tell which commits only it holds; the tree is kept", path, why)}
	}
	if err != nil {
		return nil, unreadable(err.Error())
	}
	if !fi.Mode().IsRegular() {
		return nil, unreadable("not a regular file")
	}
	b, err := safefile.Read(path, reflogLimit)
	if err != nil {
		return nil, unreadable(err.Error())
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64*1024), len(b)+1)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		for _, id := range f[:min(2, len(f))] {
			if machine.IsFullCommit(id) && strings.Trim(id, "0") != "" {
				out = append(out, id)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, unreadable(err.Error())
	}
	return out, nil
}

func dedupe(ids []string) []string {
	seen := map[string]bool{}
	out := ids[:0:0]
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// keepUnreachable gives every candidate commit that no ref other than the
// branch custody is about to delete reaches a recovery ref, created with
// an empty old value so nothing is overwritten. Candidates git no longer
// has are skipped. One rev-list process (and, when needed, one update-ref
// each): a reflog names commits, which rev-list reads as they are. Only
// when it fails (a candidate git no longer has, or one it cannot read) are
// the candidates sorted first with one cat-file, and rev-list asked again
// about the commits among them, whose error then stands.
func keepUnreachable(ctx context.Context, e *Env, rec machine.Record, cands []string) ([]RecoveredRef, error) {
	if len(cands) == 0 {
		return nil, nil
	}
	commits := cands
	lost, err := unreachableOf(ctx, e, rec, commits)
	if err != nil && ctx.Err() == nil {
		if commits, err = commitsOf(ctx, e, rec, cands); err == nil && len(commits) > 0 {
			lost, err = unreachableOf(ctx, e, rec, commits)
		}
	}
	if err != nil {
		return nil, err
	}
	var keep []string
	for _, c := range dedupe(commits) {
		if lost[c] {
			keep = append(keep, c)
		}
	}
	if len(keep) == 0 {
		return nil, nil
	}
	sort.Strings(keep)
	refs := make([]RecoveredRef, 0, len(keep))
	for _, c := range keep {
		ref := RecoveredRefPrefix + rec.ID + "/" + c
		if _, err := e.Git.Mutate(ctx, e.Repo.MainCheckout, "update-ref", ref, c, ""); err != nil {
			return refs, fmt.Errorf("keep commit %s of %s under %s: %w", c, rec.ID, ref, err)
		}
		refs = append(refs, RecoveredRef{Ref: ref, Commit: c})
	}
	return refs, nil
}

// commitsOf is the candidates git has as commits, asked with one cat-file.
func commitsOf(ctx context.Context, e *Env, rec machine.Record, cands []string) ([]string, error) {
	out, err := e.Git.ObserveInput(ctx, e.Repo.MainCheckout, []byte(strings.Join(cands, "\n")+"\n"),
		"cat-file", "--batch-check=%(objectname) %(objecttype)")
	if err != nil {
		return nil, fmt.Errorf("check recovery candidates of %s: %w", rec.ID, err)
	}
	types, err := observe.ParseBatchCheck(out)
	if err != nil {
		return nil, fmt.Errorf("check recovery candidates of %s: %w", rec.ID, err)
	}
	var commits []string
	for _, c := range cands {
		if types[c] == "commit" && !slices.Contains(commits, c) {
			commits = append(commits, c)
		}
	}
	return commits, nil
}

// unreachableOf asks one rev-list which of commits (and their ancestors)
// no ref reaches but the branch custody is about to delete, nor the commit
// the remote advertised for the removal's ancestry proof.
func unreachableOf(ctx context.Context, e *Env, rec machine.Record, commits []string) (map[string]bool, error) {
	args := []string{"rev-list", "--stdin"}
	if ownedBranch(e, rec) {
		args = append(args, "--exclude=refs/heads/"+rec.Branch)
	}
	args = append(args, "--not", "--glob=refs/*")
	if p := rec.Intent.Proof; p != nil && p.Kind == machine.ProofAncestry && machine.IsFullCommit(p.Head) {
		// The remote advertised a ref holding this commit: it and its
		// ancestors are elsewhere.
		args = append(args, p.Head)
	}
	out, err := e.Git.ObserveInput(ctx, e.Repo.MainCheckout, []byte(strings.Join(commits, "\n")+"\n"), args...)
	if err != nil {
		return nil, fmt.Errorf("find commits only %s's reflogs hold: %w", rec.ID, err)
	}
	ids, err := observe.ParseOIDList(out)
	if err != nil {
		return nil, fmt.Errorf("find commits only %s's reflogs hold: %w", rec.ID, err)
	}
	lost := map[string]bool{}
	for _, id := range ids {
		lost[id] = true
	}
	return lost, nil
}

// ownedBranch reports whether custody will try to delete rec's branch at
// removal (see deleteOwnedBranch).
func ownedBranch(e *Env, rec machine.Record) bool {
	return rec.Origin == machine.OriginCreated && rec.Branch != "" && rec.Branch == e.Policy.BranchPrefix+rec.ID
}

// keepWorktreeConfig copies a non-empty per-worktree config file under
// RecoveredDir and returns the copy's path ("" when there was nothing to
// keep or an identical copy is there). A config.worktree that is not a
// regular file, or cannot be read, keeps the tree.
func keepWorktreeConfig(e *Env, id, path string) (string, *machine.Refusal, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, nil
	}
	refuse := func(why string) *machine.Refusal {
		return &machine.Refusal{Code: machine.CodeRecoveryFailed, Path: path, Retry: "custody resume",
			Message: fmt.Sprintf("the per-worktree config %s %s, so its settings cannot be kept; the tree is kept", path, why)}
	}
	if err != nil {
		return "", refuse("cannot be read: " + err.Error()), nil
	}
	if !fi.Mode().IsRegular() {
		return "", refuse("is not a regular file"), nil
	}
	b, err := safefile.Read(path, observe.EnvFileLimit)
	if err != nil {
		return "", refuse("cannot be read: " + err.Error()), nil
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return "", nil, nil
	}
	dir := RecoveredDir(e.Repo, id)
	dst := filepath.Join(dir, "config.worktree")
	if old, err := os.ReadFile(dst); err == nil && bytes.Equal(old, b) {
		return "", nil, nil
	}
	if err := safefile.DirBelow(e.Repo.CommonDir, dir, true, 0o700); err != nil {
		return "", nil, fmt.Errorf("keep %s: %w", path, err)
	}
	if err := WriteFile(dst, b, 0o600); err != nil {
		return "", nil, fmt.Errorf("keep %s: %w", path, err)
	}
	return dst, nil, nil
}
