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
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
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
func RecoveredDir(repo hostio.Repo, id string) string {
	return filepath.Join(repo.StateDir(), "recovered", id)
}

// preserveWhatDies keeps what `git worktree remove` (and the branch
// deletion after it) would destroy with rec's tree, member by member of
// its admin entry as machine's catalogue sorts them (machine.AdminKeptOf):
// every commit a reflog names (the tree's own logs/, and the reflog of the
// branch custody deletes with it), every object a pseudoref names (ORIG_HEAD, FETCH_HEAD,
// AUTO_MERGE, ...), and the branch tip itself, that no other ref reaches
// gets a recovery ref; a person's setting or text (config.worktree, the
// sparse checkout's patterns, an unused message) is copied under
// RecoveredDir. A member that keeps the tree (machine.AdminHidden), one
// that appeared after the final observation, is a refusal: the tree must
// stay. Ids in seen were asked about by an earlier call in this command
// and are not asked again; every id asked is added to it (seen may be nil).
// It is idempotent (what an earlier run kept is reachable and is not kept
// again), journals what it made, and returns the recovery refs it wrote.
func preserveWhatDies(ctx context.Context, e *Env, rec machine.Record, seen map[string]bool) ([]RecoveredRef, *machine.Refusal, error) {
	var in machine.Intent
	if rec.Intent != nil {
		in = *rec.Intent
	}
	key := in.AdminKey
	if key == "" {
		key = rec.AdminKey
	}
	var detail RecoveredDetail
	var cands, objs []string
	if key != "" && key == filepath.Base(key) && key != "." && key != ".." {
		admin := e.Repo.AdminDir(key)
		files, err := gitfiles.ReadAdminEntry(admin)
		if err != nil && (!errors.Is(err, fs.ErrNotExist) || hostio.Lstat(admin).State != machine.PathAbsent) {
			return nil, machine.AdminEntryUnlistedRefusal(admin, err), nil
		}
		if hs := machine.AdminHidden(admin, rec.Path, files); len(hs) > 0 {
			return nil, machine.AdminAppearedRefusal(hs[0]), nil
		}
		kept := machine.AdminKeptOf(files)
		for _, name := range kept.Reflogs {
			c, r := reflogCommits(filepath.Join(admin, filepath.FromSlash(name)))
			if r != nil {
				return nil, r, nil
			}
			cands = append(cands, c...)
		}
		for _, name := range kept.Objects {
			ids, r := pseudorefObjects(filepath.Join(admin, filepath.FromSlash(name)))
			if r != nil {
				return nil, r, nil
			}
			objs = append(objs, ids...)
		}
		for _, name := range kept.Copies {
			file, r, err := keepCopy(e, rec.ID, admin, name)
			if r != nil || err != nil {
				return nil, r, err
			}
			if file != "" {
				detail.Files = append(detail.Files, file)
			}
		}
	}
	if ownedBranch(e, rec) {
		// Only a branch custody deletes takes its reflog with it: the
		// reflog of a branch it keeps (new --checkout, adopt) stays.
		c, r := reflogCommits(filepath.Join(e.Repo.CommonDir, "logs", "refs", "heads", filepath.FromSlash(rec.Branch)))
		if r != nil {
			return nil, r, nil
		}
		cands = append(cands, c...)
	}
	if machine.IsFullCommit(in.Commit) {
		cands = append(cands, in.Commit)
	}
	// A pseudoref naming what a reflog names too (ORIG_HEAD after a reset
	// that was logged) names a commit: it needs no cat-file.
	logged := map[string]bool{}
	for _, c := range cands {
		logged[c] = true
	}
	objs = slices.DeleteFunc(objs, func(id string) bool { return logged[id] })
	refs, err := keepUnreachable(ctx, e, rec, unasked(seen, cands), unasked(seen, objs))
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

// unasked is ids without those in seen, deduplicated; each is added to
// seen (a nil seen filters nothing).
func unasked(seen map[string]bool, ids []string) []string {
	ids = dedupe(ids)
	if seen == nil {
		return ids
	}
	out := ids[:0:0]
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// pseudorefObjects reads every object id a pseudoref file in the admin
// entry names: one id (ORIG_HEAD, AUTO_MERGE, ...), or one per line with
// what it was fetched from after it (FETCH_HEAD). A symbolic one ("ref:
// NAME") names a ref, which is kept where it is. A missing file names
// none; one that is not a regular file, cannot be read, or holds a line
// that names no object is a refusal: what it holds is unknown.
func pseudorefObjects(path string) ([]string, *machine.Refusal) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, machine.PseudorefUnreadableRefusal(path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, machine.PseudorefNotRegularRefusal(path)
	}
	b, err := safefile.Read(path, reflogLimit)
	if err != nil {
		return nil, machine.PseudorefUnreadableRefusal(path, err)
	}
	var out []string
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "ref: ") {
			continue
		}
		id, _, _ := strings.Cut(line, "\t")
		id = strings.TrimSpace(id)
		if !machine.IsFullCommit(id) {
			return nil, machine.PseudorefLineRefusal(path, i+1)
		}
		if strings.Trim(id, "0") != "" {
			out = append(out, id)
		}
	}
	return out, nil
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
	if err != nil {
		return nil, machine.ReflogUnreadableRefusal(path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, machine.ReflogNotRegularRefusal(path)
	}
	b, err := safefile.Read(path, reflogLimit)
	if err != nil {
		return nil, machine.ReflogUnreadableRefusal(path, err)
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
		return nil, machine.ReflogUnreadableRefusal(path, err)
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
//
// objs are objects of any type a pseudoref names: one cat-file sorts them
// first. Commits among them are candidates like the others; a tag, tree
// or blob gets a recovery ref of its own unless a ref already names it
// (one for-each-ref): a ref to an annotated tag keeps the tag and what it
// points at, a ref to a tree (AUTO_MERGE's) keeps the tree.
func keepUnreachable(ctx context.Context, e *Env, rec machine.Record, cands, objs []string) ([]RecoveredRef, error) {
	var others []string
	if len(objs) > 0 {
		types, err := objectTypes(ctx, e, rec, objs)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			switch types[o] {
			case "commit":
				cands = append(cands, o)
			case "tag", "tree", "blob":
				others = append(others, o)
			}
		}
	}
	refs, err := keepUnreachableCommits(ctx, e, rec, dedupe(cands))
	if err != nil || len(others) == 0 {
		return refs, err
	}
	named, err := refValues(ctx, e, rec)
	if err != nil {
		return refs, err
	}
	for _, o := range dedupe(others) {
		if named[o] {
			continue
		}
		r, err := keepUnder(ctx, e, rec, o)
		if err != nil {
			return refs, err
		}
		refs = append(refs, r)
	}
	return refs, nil
}

// keepUnder makes refs/custody/recovered/<id>/<object> point at object,
// only if no such ref exists.
func keepUnder(ctx context.Context, e *Env, rec machine.Record, object string) (RecoveredRef, error) {
	ref := RecoveredRefPrefix + rec.ID + "/" + object
	if _, err := e.Git.Mutate(ctx, e.Repo.MainCheckout, "update-ref", ref, object, ""); err != nil {
		return RecoveredRef{}, fmt.Errorf("keep %s of %s under %s: %w", object, rec.ID, ref, err)
	}
	return RecoveredRef{Ref: ref, Commit: object}, nil
}

// refValues is the set of objects some ref names directly.
func refValues(ctx context.Context, e *Env, rec machine.Record) (map[string]bool, error) {
	out, err := e.Git.Observe(ctx, e.Repo.MainCheckout, "for-each-ref", "--format=%(objectname) %(refname)")
	if err != nil {
		return nil, fmt.Errorf("list the refs before keeping %s's objects: %w", rec.ID, err)
	}
	lines, err := gitfiles.ParseRefLines(out)
	if err != nil {
		return nil, fmt.Errorf("list the refs before keeping %s's objects: %w", rec.ID, err)
	}
	named := map[string]bool{}
	for _, l := range lines {
		named[l.Object] = true
	}
	return named, nil
}

// keepUnreachableCommits is keepUnreachable over candidates that name
// commits (a reflog's).
func keepUnreachableCommits(ctx context.Context, e *Env, rec machine.Record, cands []string) ([]RecoveredRef, error) {
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
		r, err := keepUnder(ctx, e, rec, c)
		if err != nil {
			return refs, err
		}
		refs = append(refs, r)
	}
	return refs, nil
}

// commitsOf is the candidates git has as commits, asked with one cat-file.
func commitsOf(ctx context.Context, e *Env, rec machine.Record, cands []string) ([]string, error) {
	types, err := objectTypes(ctx, e, rec, cands)
	if err != nil {
		return nil, err
	}
	var commits []string
	for _, c := range cands {
		if types[c] == "commit" && !slices.Contains(commits, c) {
			commits = append(commits, c)
		}
	}
	return commits, nil
}

// objectTypes is the type of every id git has, asked with one cat-file.
func objectTypes(ctx context.Context, e *Env, rec machine.Record, ids []string) (map[string]string, error) {
	out, err := e.Git.ObserveInput(ctx, e.Repo.MainCheckout, []byte(strings.Join(ids, "\n")+"\n"),
		"cat-file", "--batch-check=%(objectname) %(objecttype)")
	if err != nil {
		return nil, fmt.Errorf("check recovery candidates of %s: %w", rec.ID, err)
	}
	types, err := gitfiles.ParseBatchCheck(out)
	if err != nil {
		return nil, fmt.Errorf("check recovery candidates of %s: %w", rec.ID, err)
	}
	return types, nil
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
	ids, err := gitfiles.ParseOIDList(out)
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
	return machine.BranchOwned(rec, e.Policy)
}

// keepCopy copies a non-empty member name of the admin entry admin (a
// person's setting or text: config.worktree, info/sparse-checkout, an
// unused message) to the same name under RecoveredDir, and returns the
// copy's path ("" when there was nothing to keep or an identical copy is
// there). A member that is not a regular file, or cannot be read, keeps
// the tree.
func keepCopy(e *Env, id, admin, name string) (string, *machine.Refusal, error) {
	path := filepath.Join(admin, filepath.FromSlash(name))
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, nil
	}
	if err != nil {
		return "", machine.KeptFileUnreadableRefusal(path, err), nil
	}
	if !fi.Mode().IsRegular() {
		return "", machine.KeptFileNotRegularRefusal(path), nil
	}
	b, err := safefile.Read(path, observe.EnvFileLimit)
	if err != nil {
		return "", machine.KeptFileUnreadableRefusal(path, err), nil
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return "", nil, nil
	}
	dst := filepath.Join(RecoveredDir(e.Repo, id), filepath.FromSlash(name))
	if old, err := os.ReadFile(dst); err == nil && bytes.Equal(old, b) {
		return "", nil, nil
	}
	if err := safefile.DirBelow(e.Repo.CommonDir, filepath.Dir(dst), true, 0o700); err != nil {
		return "", nil, fmt.Errorf("keep %s: %w", path, err)
	}
	if err := WriteFile(dst, b, 0o600); err != nil {
		return "", nil, fmt.Errorf("keep %s: %w", path, err)
	}
	return dst, nil, nil
}
