package quarantine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/safefile"
	"github.com/custody-sh/custody/steps/failpoint"
)

// A removal closes the window between its final observation and the
// deletion by moving the tree aside first: rename it to a sibling
// quarantine directory (same parent, so the same filesystem and the same
// depth: relative gitdir links of submodules still resolve), observe it
// there against a manifest of what the tree may hold (HEAD's entries,
// byte for byte by git's blob hash, its .git file, custody's own .env and
// the build output the final observation discarded), delete entry by
// entry only what matches, and move it back with a refusal when anything
// else is there. A discarded directory is classified again in quarantine
// and must still be the same kind of build output; every entry below it
// must be neither a .git, a git directory nor a special file (nor anything
// but bytecode in a __pycache__/). A writer that opens a path under
// the tree after the rename finds no tree; one that wrote before it is
// found by the check. The check and the deletion go through the same
// directories, held open (scan.go), and each directory is
// listed again before the first deletion, before the .git files and
// before the directories go: whatever changed since the check stops the
// removal there, and what it had deleted is put back (run.go).

// Entry is one entry a quarantined tree may hold.
type Entry struct {
	// Kind is "file", "link", "gitfile" (any regular .git file of the tree
	// or of a submodule), "dir" (a submodule root) or "discard" (build
	// output: the entry and everything below it, as Build allows).
	Kind string `json:"kind"`
	// Build is the kind of build output a "discard" entry was recognised
	// as.
	Build machine.BuildKind `json:"build,omitempty"`
	Exec  bool              `json:"exec,omitempty"`
	// OID is git's blob id of the content (the target, for a link).
	OID string `json:"oid,omitempty"`
	// Gitdir is the git directory a "gitfile" entry must name when the
	// path it names holds a CR or LF: the tree's own admin entry, whose
	// path may (a repository under a directory named with a newline).
	Gitdir string `json:"gitdir,omitempty"`
}

// Manifest maps slash-separated paths relative to the tree to what each
// may be.
type Manifest map[string]Entry

// Path is where rec's tree goes before deletion.
func Path(rec machine.Record) string {
	return filepath.Join(filepath.Dir(filepath.Clean(rec.Path)), ".custody-quarantine-"+rec.ID)
}

// manifestPath is where the manifest of rec's quarantine is kept.
// manifestLimit bounds what custody reads of a quarantine manifest (one
// line per entry of a tree's HEAD).
const manifestLimit = 1 << 30

func manifestPath(e *Env, id string) string {
	return filepath.Join(e.Repo.StateDir(), "quarantine", id+".json")
}

// buildManifest lists what the tree at dir may hold at commit: every entry
// of HEAD's tree (recursing into checked-out submodules at their recorded
// commits), the .git files, and .env when it holds only custody's lines
// (its bytes as they are now), and each discarded build output directory.
// HEAD's entries come from the tree's index file when its entries hash to
// commit's tree id, as head knows it (headTree.listing); else git lists
// them.
func buildManifest(ctx context.Context, e *Env, dir, commit string, head HeadTree, envOwn bool, discarded []machine.DiscardedDir) (Manifest, error) {
	m := Manifest{".git": {Kind: "gitfile"}}
	if ents, ok := head.listing(e, commit); ok {
		if err := addEntries(ctx, e, m, dir, "", ents); err != nil {
			return nil, err
		}
	} else if err := addTree(ctx, e, m, dir, "", commit); err != nil {
		return nil, err
	}
	for _, d := range discarded {
		if _, ok := m[d.Path]; ok {
			return nil, fmt.Errorf("build output %s is also in HEAD", d.Path)
		}
		m[d.Path] = Entry{Kind: "discard", Build: d.Kind}
	}
	if envOwn {
		b, err := safefile.Read(filepath.Join(dir, ".env"), observe.EnvFileLimit)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", filepath.Join(dir, ".env"), err)
		}
		m[".env"] = Entry{Kind: "file", OID: blobID(len(commit), b)}
	}
	return m, nil
}

func addTree(ctx context.Context, e *Env, m Manifest, top, prefix, commit string) error {
	gitDir := e.Repo.MainCheckout
	if prefix != "" {
		gitDir = filepath.Join(top, filepath.FromSlash(prefix))
	}
	out, err := e.Git.Observe(ctx, gitDir, "ls-tree", "-r", "-z", "--full-tree", commit)
	if err != nil {
		return fmt.Errorf("list %s at %s: %w", gitDir, commit, err)
	}
	ents, err := gitfiles.ParseLsTree(out)
	if err != nil {
		return fmt.Errorf("list %s at %s: %w", gitDir, commit, err)
	}
	return addEntries(ctx, e, m, top, prefix, ents)
}

// addEntries adds ents, the entries of the tree (or the submodule at
// prefix) at top, to m, recursing into checked-out submodules.
func addEntries(ctx context.Context, e *Env, m Manifest, top, prefix string, ents []gitfiles.TreeEntry) error {
	for _, ent := range ents {
		p := ent.Path
		if prefix != "" {
			p = prefix + "/" + p
		}
		switch ent.Mode {
		case "100644":
			m[p] = Entry{Kind: "file", OID: ent.OID}
		case "100755":
			m[p] = Entry{Kind: "file", Exec: true, OID: ent.OID}
		case "120000":
			m[p] = Entry{Kind: "link", OID: ent.OID}
		case "160000":
			m[p] = Entry{Kind: "dir"}
			sub := filepath.Join(top, filepath.FromSlash(p))
			if names, err := os.ReadDir(sub); err != nil || len(names) == 0 {
				continue // not checked out: nothing of it may be there
			}
			m[p+"/.git"] = Entry{Kind: "gitfile"}
			if err := addTree(ctx, e, m, top, p, ent.OID); err != nil {
				return err
			}
		}
	}
	return nil
}

// blobID is git's blob id of b, SHA-1 or SHA-256 by the repository's id
// length.
func blobID(idLen int, b []byte) string {
	return gitfiles.BlobID(objectFormat(idLen), b)
}

// objectFormat is the repository's object format by its id length.
func objectFormat(idLen int) gitfiles.ObjectFormat {
	if idLen == 64 {
		return gitfiles.FormatSHA256
	}
	return gitfiles.FormatSHA1
}

// fileID hashes the regular file at path as git would (observe.HashFile:
// no symlink followed, no FIFO waited on, still the lstat'ed file).
func fileID(path string, idLen int, fi fs.FileInfo) (string, error) {
	id, err := observe.HashFile(objectFormat(idLen), path, fi)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return id, nil
}

// gitdirLineOnly reports whether b is a .git file as git writes one: the
// single line "gitdir: PATH" (gitfiles.ParseGitFile), with nothing else.
// Anything more is a person's and is not deleted with the tree. A PATH
// holding a CR or LF is git's only when it is want, the git directory
// this .git file must name (its tree's admin entry): git writes the path
// as it is, newlines and all, and reads up to the file's last line end.
func gitdirLineOnly(b []byte, want string) bool {
	dir, err := gitfiles.ParseGitFile(b, "/")
	if err != nil {
		return false
	}
	return !strings.ContainsAny(dir, "\r\n") || (want != "" && dir == filepath.Clean(want))
}

// unexpected returns why the entry rel at path (lstat fi) is not what m
// allows, "" when it is.
func (m Manifest) unexpected(rel, path string, fi fs.FileInfo, idLen int) string {
	why, _ := m.check(rel, path, fi, idLen, nil)
	return why
}

// check is unexpected that also returns the bytes of a .git file it read
// and found as git writes it (nil for any other entry), so that nothing
// reads it twice, and tells opened (when set) the path of every file
// whose content it reads.
func (m Manifest) check(rel, path string, fi fs.FileInfo, idLen int, opened func(string)) (string, []byte) {
	if root, kind, ok := m.discardRoot(rel); ok {
		return discardUnexpected(kind, rel, root, path, fi), nil
	}
	want := m[rel]
	if fi.Mode().IsRegular() && want.Kind == "gitfile" {
		if opened != nil {
			opened(path)
		}
		b, err := safefile.Read(path, 64<<10)
		if err != nil {
			return "unreadable: " + err.Error(), nil
		}
		if !gitdirLineOnly(b, want.Gitdir) {
			return "it holds more than the one gitdir line git writes", nil
		}
		return "", b
	}
	if opened != nil && fi.Mode().IsRegular() && want.Kind == "file" && want.Exec == (fi.Mode().Perm()&0o100 != 0) {
		opened(path)
	}
	return m.unexpectedEntry(rel, path, fi, idLen), nil
}

// unexpectedEntry is unexpected for an entry below no discarded directory.
func (m Manifest) unexpectedEntry(rel, path string, fi fs.FileInfo, idLen int) string {
	want, ok := m[rel]
	mode := fi.Mode()
	switch {
	case mode.IsDir():
		return "" // directories hold no bytes; what is in them is checked
	case !ok:
		return "not in the tree's HEAD"
	case mode.IsRegular() && want.Kind == "gitfile":
		b, err := safefile.Read(path, 64<<10)
		if err != nil {
			return "unreadable: " + err.Error()
		}
		if !gitdirLineOnly(b, want.Gitdir) {
			return "it holds more than the one gitdir line git writes"
		}
		return ""
	case mode.IsRegular() && want.Kind == "file":
		if want.Exec != (mode.Perm()&0o100 != 0) {
			return "its executable bit differs from HEAD"
		}
		id, err := fileID(path, idLen, fi)
		if err != nil {
			return "unreadable: " + err.Error()
		}
		if id != want.OID {
			return "its bytes differ from HEAD"
		}
		return ""
	case mode&fs.ModeSymlink != 0 && want.Kind == "link":
		target, err := os.Readlink(path)
		if err != nil {
			return "unreadable: " + err.Error()
		}
		if blobID(idLen, []byte(target)) != want.OID {
			return "its target differs from HEAD"
		}
		return ""
	}
	return fmt.Sprintf("a %s where HEAD has a %s", mode.Type(), want.Kind)
}

// quarantinedFile is a file (any entry but a directory) the check found
// in a quarantine: its path, the slash-separated path relative to the
// quarantine that the manifest knows it by, the directory holding it (as
// the check listed it), its name there and the inode number the check's
// lstat gave it.
type quarantinedFile struct {
	path, rel string
	node      *qnode
	name      string
	ino       uint64
}

// Remove moves rec's tree (observed as obs, which proved it
// removable; head is what is known of its HEAD's tree) into quarantine and
// deletes it there. It returns a refusal when the tree was moved back
// (nothing of it deleted) or could not be moved; nil once the quarantine
// is gone.
func Remove(ctx context.Context, e *Env, rec machine.Record, obs machine.WorktreeObservation, head HeadTree) (*machine.Refusal, error) {
	in := rec.Intent
	var m Manifest
	var err error
	if in.Proof != nil && in.Proof.Kind == machine.ProofArchive {
		m, err = e.Contents(ctx, in.Proof)
	} else {
		m, err = buildManifest(ctx, e, rec.Path, in.Commit, head, obs.EnvOwn, obs.Discarded)
	}
	if err == nil {
		m[".git"] = Entry{Kind: "gitfile", Gitdir: e.Repo.AdminDir(rec.AdminKeyOrID())}
	}
	if err != nil {
		return machine.QuarantineUnlistedRefusal(rec.Path, err), nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	mp := manifestPath(e, rec.ID)
	if err := safefile.DirBelow(e.Repo.CommonDir, filepath.Dir(mp), true, 0o700); err != nil {
		return nil, fmt.Errorf("quarantine manifest: %w", err)
	}
	if err := e.WriteFile(mp, b, 0o600); err != nil {
		return nil, fmt.Errorf("quarantine manifest: %w", err)
	}
	q := in.Quarantine
	failpoint.Pause("apply/before-quarantine")
	unlock, err := gitfiles.RegistryLock(ctx, e.Repo, true)
	if err != nil {
		return nil, err
	}
	err = os.Rename(rec.Path, q)
	unlock()
	if err != nil {
		return machine.QuarantineMoveFailedRefusal(rec.Path, q, err), nil
	}
	failpoint.At("apply/after-quarantine")
	failpoint.Pause("apply/after-quarantine")
	since := changeMoment(q)
	if ref := quarantineInUse(e, rec); ref != nil {
		return ref, nil
	}
	disposable, err := e.Disposable()
	if err != nil {
		return moveBack(e, rec, "", "the disposable patterns cannot be read: "+err.Error(), false)
	}
	return finishQuarantine(ctx, e, rec, m, &disposable, since)
}

// Settle finishes what a killed run left in rec's quarantine:
// nothing when there is none; else it checks it against the manifest and
// deletes it, or moves it back. Entries already deleted are no hazard:
// each was HEAD's, byte for byte.
func Settle(ctx context.Context, e *Env, rec machine.Record) (*machine.Refusal, error) {
	in := rec.Intent
	if in == nil || in.Quarantine == "" {
		return nil, nil
	}
	if _, err := os.Lstat(in.Quarantine); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return machine.QuarantineUnobservedRefusal(in.Quarantine, rec.ID, err), nil
	}
	b, err := safefile.Read(manifestPath(e, rec.ID), manifestLimit)
	var m Manifest
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err != nil {
		// Without the manifest nothing in it can be told apart: put it
		// back whole.
		return moveBack(e, rec, "", "its manifest cannot be read: "+err.Error(), true)
	}
	since := changeMoment(in.Quarantine)
	if ref := quarantineInUse(e, rec); ref != nil {
		return ref, nil
	}
	return finishQuarantine(ctx, e, rec, m, nil, since)
}

// finishQuarantine checks the quarantine against m, deletes it entry by
// entry (each file re-checked right before it goes), or moves it back.
// With reclassify (the tree was quarantined just now, under those
// disposable patterns), each discarded directory must first be classified
// again as the same kind of build output. A run that settles a killed
// removal passes nil: what it already deleted of a directory may be what
// made it recognisable, and each entry left is still checked. since is
// the moment of the quarantine's filesystem clock taken before the in-use
// scan (changeMoment): a file changed earlier than it and not since is
// read once.
func finishQuarantine(ctx context.Context, e *Env, rec machine.Record, m Manifest, reclassify *machine.Patterns, since time.Time) (*machine.Refusal, error) {
	q := rec.Intent.Quarantine
	if reclassify != nil {
		if stray, why := m.reclassified(q, *reclassify); stray != "" {
			return moveBack(e, rec, stray, why, false)
		}
	}
	var once sync.Once
	d := qdeletion{m: m, idLen: len(rec.Intent.Commit), since: since,
		// A lock taken since the final observation (git finds the entry
		// by its path even while the tree is in quarantine) keeps the
		// tree: the admin entry, its lock and reason, would go with it.
		hold: func() (string, string) {
			if key := rec.AdminKeyOrID(); key != "" && key == filepath.Base(key) {
				if lock := filepath.Join(e.Repo.AdminDir(key), "locked"); hostio.Lstat(lock).State != machine.PathAbsent {
					return lock, "the tree was locked with git worktree lock"
				}
			}
			return "", ""
		},
		afterFirst: func() {
			once.Do(func() {
				failpoint.At("apply/during-delete")
				failpoint.Pause("apply/during-delete")
			})
		},
	}
	res := d.run(q)
	if res.stray == "" {
		_ = os.Remove(manifestPath(e, rec.ID))
		return nil, nil
	}
	return stoppedRemoval(ctx, e, rec, m, res, reclassify == nil)
}

// changeMoment is a moment of the clock that stamps the files of the
// quarantine q, no later than now: the ctime of q's parent directory,
// which moving the tree into q stamped (observe.ChangeMoment). It is the
// zero time, and every file is read again right before its deletion, when
// that filesystem's stamps are not the kernel's or the parent is on
// another device than q.
func changeMoment(q string) time.Time {
	fi, err := os.Lstat(q)
	if err != nil {
		return time.Time{}
	}
	dev, ok := observe.DevOf(fi)
	if !ok {
		return time.Time{}
	}
	at, ok := observe.ChangeMoment(filepath.Dir(q), dev)
	if !ok {
		return time.Time{}
	}
	return at
}

// moveBack returns the quarantine, nothing (more) of it deleted, to the
// tree's path (when that is free) and refuses, naming the entry that
// stopped the removal. settling is set when a run stopped before may
// have deleted some of it.
func moveBack(e *Env, rec machine.Record, stray, why string, settling bool) (*machine.Refusal, error) {
	stray, where, err := returnQuarantine(e, rec, stray)
	if err != nil {
		return nil, err
	}
	return machine.QuarantineChangedRefusal(stray, rec.ID, why, where, settling), nil
}

// returnQuarantine moves rec's quarantine back to the tree's path when that
// is free, and says where the tree is now and where stray (a path in the
// quarantine, or "") is now.
func returnQuarantine(e *Env, rec machine.Record, stray string) (string, string, error) {
	q := rec.Intent.Quarantine
	where := q
	if _, err := os.Lstat(rec.Path); errors.Is(err, fs.ErrNotExist) {
		if err := os.Rename(q, rec.Path); err != nil {
			return "", "", fmt.Errorf("move quarantine %s back to %s: %w", q, rec.Path, err)
		}
		where = rec.Path
		_ = os.Remove(manifestPath(e, rec.ID)) // nothing is quarantined any more
		if rel, err := filepath.Rel(q, stray); err == nil && stray != "" {
			stray = filepath.Join(rec.Path, rel)
		}
	}
	if stray == "" {
		stray = where
	}
	return stray, where, nil
}

// quarantineInUse refuses the removal, and moves the tree back, when a
// process uses anything in rec's quarantine: a descriptor opened in the
// tree after the final observation follows it into quarantine, and what
// is written through it after a file's last check would be lost with the
// file. Nil when no process uses it.
func quarantineInUse(e *Env, rec machine.Record) *machine.Refusal {
	q := rec.Intent.Quarantine
	ps, err := e.scanProcesses().Inside(q)
	if err == nil && len(ps) == 0 {
		return nil
	}
	_, where, rerr := returnQuarantine(e, rec, "")
	return machine.QuarantineInUseRefusal(rec.ID, where, ps, err, rerr)
}

// gitfilesApart splits files into the .git files of the tree and of its
// submodules and all the others, each in the order given.
func (m Manifest) gitfilesApart(files []quarantinedFile) (others, gitfiles []quarantinedFile) {
	others = make([]quarantinedFile, 0, len(files))
	for _, f := range files {
		if m[f.rel].Kind == "gitfile" {
			gitfiles = append(gitfiles, f)
		} else {
			others = append(others, f)
		}
	}
	return others, gitfiles
}
