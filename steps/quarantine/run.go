package quarantine

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
)

// qdeletion is one deletion of a quarantine against its manifest.
type qdeletion struct {
	m     Manifest
	idLen int
	// hold, when set, is asked right before the first deletion whether
	// something keeps the tree: the path that does and why ("" when
	// nothing does).
	hold func() (string, string)
	// afterFirst, when set, runs once after the first deletion.
	afterFirst func()
	// budget bounds the directories held open at once (0: qdirBudget).
	budget int
	// since is a moment of the quarantine's filesystem clock taken before
	// the check read anything and before the in-use scan that preceded it
	// (changeMoment). Right before its deletion a file is read again
	// unless lstat still says exactly what it said at the check and its
	// ctime and mtime were both earlier than since (observe.UnchangedSince);
	// the zero time trusts no file, and every one is read again.
	since time.Time
	// opened, when set, is told the path of every file whose content the
	// check or the deletion reads.
	opened func(string)
	// stage, when set, is called as the deletion reaches each stage:
	// "checked" (every entry checked, nothing deleted), "files-deleted"
	// (every file but the .git files gone) and "gitfiles-deleted". Tests
	// change the quarantine there.
	stage func(string)
}

// qresult is how a deletion of a quarantine ended.
type qresult struct {
	// stray is the entry that stopped it ("" when the quarantine is gone)
	// and why; err is set instead of why when stray could not be deleted.
	stray, why string
	err        error
	// deleted are the files this deletion deleted (relative, sorted),
	// each of them what the check saw.
	deleted []string
	// gitfiles are the bytes of each .git file the check read (relative).
	gitfiles map[string][]byte
	// aside are the files a killed run left renamed aside (relative), by
	// the file each was.
	aside map[string]string
}

// run checks the quarantine q against d.m and deletes it, or stops at the
// first entry that is not as the check saw it. Every file is read once,
// after the tree went into quarantine, and read again right before its
// deletion only when its identity changed or the check cannot rule out a
// change it did not see (d.since). No file is deleted until every
// directory, listed again, holds exactly what the check listed; the .git
// files go only after every other file, once every directory holds
// exactly what the check listed less what was deleted, and the
// directories only after the same holds again: whatever was added,
// replaced or moved during the check or the deletion stops it there, with
// the .git files still in place whenever it was found before them.
func (d qdeletion) run(q string) qresult {
	at := func(s string) {
		if d.stage != nil {
			d.stage(s)
		}
	}
	// Right before its deletion a file is read again unless lstat still
	// says exactly what it said at the check and its stamps were already
	// earlier than d.since, a moment taken before the check read it
	// (observe.UnchangedSince): a write since would have stamped it anew.
	var checked map[string]fs.FileInfo
	trusted, onDevice := observe.StampsTrusted(q)
	if trusted && !d.since.IsZero() {
		checked = map[string]fs.FileInfo{}
	}
	sc, stray, why := scanQuarantineOpened(q, d.m, d.idLen, checked, d.budget, d.opened)
	defer sc.close()
	res := qresult{gitfiles: sc.gitfiles, aside: sc.aside}
	stop := func(stray, why string) qresult {
		res.stray, res.why = stray, why
		return res
	}
	if stray != "" {
		return stop(stray, why)
	}
	for f, fi := range checked {
		if !onDevice(fi) {
			delete(checked, f) // below a mount inside the tree: read again
		}
	}
	at("checked")
	if d.hold != nil {
		if stray, why := d.hold(); stray != "" {
			return stop(stray, why)
		}
	}
	if stray, why := sc.reread(nil); stray != "" {
		return stop(stray, why)
	}
	verify := func(f quarantinedFile, fi fs.FileInfo) string {
		if before, ok := checked[f.path]; ok && observe.UnchangedSince(before, fi, d.since) {
			return ""
		}
		why, _ := d.m.check(f.rel, f.path, fi, d.idLen, d.opened)
		return why
	}
	worker := func() (func(quarantinedFile) (string, error), func()) {
		c := &dirCache{sc: sc}
		return func(f quarantinedFile) (string, error) { return sc.remove(f, verify, c) }, c.close
	}
	afterFirst := d.afterFirst
	if afterFirst == nil {
		afterFirst = func() {}
	}
	gone, counted := map[string]bool{}, map[string]bool{}
	deleteAll := func(files []quarantinedFile) *deleteHalt {
		deleted, halt := deleteChecked(files, worker, afterFirst)
		for _, f := range deleted {
			gone[path.Join(f.node.rel, f.name)] = true
			if !counted[f.rel] { // a file and the same file renamed aside
				counted[f.rel] = true
				res.deleted = append(res.deleted, f.rel)
			}
		}
		slices.Sort(res.deleted)
		if halt != nil {
			res.stray, res.why, res.err = halt.path, halt.why, halt.err
		}
		return halt
	}
	// The .git files go last, so a removal stopped part way leaves trees
	// git still knows, whose deleted files are checked out again.
	others, gitfiles := d.m.gitfilesApart(sc.files)
	if deleteAll(others) != nil {
		return res
	}
	at("files-deleted")
	if stray, why := sc.reread(gone); stray != "" {
		return stop(stray, why)
	}
	if deleteAll(gitfiles) != nil {
		return res
	}
	at("gitfiles-deleted")
	if stray, why := sc.reread(gone); stray != "" {
		return stop(stray, why)
	}
	if dir, err := sc.removeDirs(); err != nil {
		// Something appeared in it since the last listing, or it cannot
		// be deleted at all (a mount point, its permissions).
		again, stray, why := scanQuarantineOpened(q, d.m, d.idLen, nil, d.budget, d.opened)
		again.close()
		if stray != "" {
			return stop(stray, why)
		}
		res.stray, res.err = dir, err
	}
	return res
}

// stoppedRemoval handles a deletion of rec's quarantine that stopped:
// the tree goes back to its path (when that is free), the files already
// deleted are put back (each .git file with the bytes the check read, the
// tracked files checked out again from the index, never over what is
// there), and it refuses naming the entry and why: quarantine-changed
// when the entry is not what the check saw, removal-failed when it could
// not be deleted. It says how many files were deleted, that each was
// HEAD's (or the archive's), and whether all were restored; when some
// were not, the retry restores them. settling is set when a run stopped
// before had deleted some of the tree.
func stoppedRemoval(ctx context.Context, e *Env, rec machine.Record, m Manifest, res qresult, settling bool) (*machine.Refusal, error) {
	entry, where, err := returnQuarantine(e, rec, res.stray)
	if err != nil {
		return nil, err
	}
	putBack(where, res.aside, res.deleted)
	tracked, left := restoreDeleted(ctx, e, where, m, res.deleted, res.gitfiles)
	return machine.StoppedRemovalRefusal(machine.StoppedRemoval{ID: rec.ID, Entry: entry, Where: where, Err: res.err, Why: res.why,
		Proof: rec.Intent.Proof, Deleted: len(res.deleted), Tracked: tracked, Left: left, Settling: settling}), nil
}

// restoreDeleted puts back in the tree at dir what deleted (paths relative
// to it) names of its tracked content: each .git file with the bytes in
// gitfiles, then every other tracked file checked out again from the index
// of the tree (or submodule) that holds it, never over what is there.
// Build output and custody's own .env are not restored (they are
// regenerated). It returns how many tracked entries deleted names and
// those not there now.
func restoreDeleted(ctx context.Context, e *Env, dir string, m Manifest, deleted []string, gitfiles map[string][]byte) (int, []string) {
	byRoot := map[string][]string{}
	var roots []string
	tracked := 0
	var left []string
	for _, rel := range deleted {
		k := m[rel].Kind
		switch k {
		case "gitfile":
			tracked++
			p := filepath.Join(dir, filepath.FromSlash(rel))
			if err := writeNew(p, gitfiles[rel]); err != nil {
				if _, err := os.Lstat(p); err != nil {
					left = append(left, rel)
				}
			}
			continue
		case "file", "link":
			tracked++
		default:
			continue
		}
		root := ""
		for p := path.Dir(rel); p != "." && p != "/"; p = path.Dir(p) {
			if m[p].Kind == "dir" {
				root = p
				break
			}
		}
		if _, ok := byRoot[root]; !ok {
			roots = append(roots, root)
		}
		byRoot[root] = append(byRoot[root], strings.TrimPrefix(strings.TrimPrefix(rel, root), "/"))
	}
	for _, root := range roots {
		paths := byRoot[root]
		in := strings.Join(paths, "\x00") + "\x00"
		// checkout-index fails for a path something else took since; the
		// others are still checked out, and each is looked for below.
		_, _ = e.Git.MutateInput(ctx, filepath.Join(dir, filepath.FromSlash(root)), []byte(in), "checkout-index", "-z", "--stdin")
		for _, p := range paths {
			if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(root), filepath.FromSlash(p))); err != nil {
				left = append(left, path.Join(root, p))
			}
		}
	}
	sort.Strings(left)
	return tracked, left
}

// putBack gives each file a killed run left renamed aside in the tree at
// dir (aside: its relative path by the file it was) its own name again,
// unless this run deleted it or something else took that name.
func putBack(dir string, aside map[string]string, deleted []string) {
	for orig, at := range aside {
		if slices.Contains(deleted, orig) {
			continue
		}
		from, to := filepath.Join(dir, filepath.FromSlash(at)), filepath.Join(dir, filepath.FromSlash(orig))
		if err := os.Link(from, to); err == nil {
			_ = os.Remove(from)
		}
	}
}

// writeNew creates the file p holding b, never over anything there.
func writeNew(p string, b []byte) error {
	if b == nil {
		return errors.New("its bytes were not read")
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
