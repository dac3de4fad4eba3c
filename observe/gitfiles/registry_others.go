package gitfiles

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/safefile"
)

// adminNames is what every admin entry's gitdir file names, read from
// Git's files once per inventory and only when an observation asks
// (Inventory.OtherEntries): one small file and one stat per entry, shared
// by every tree the inventory serves, and no git process.
type adminNames struct {
	repo hostio.Repo
	once sync.Once
	// err is set when <common>/worktrees cannot be listed: every tree's
	// other entries are then unknown.
	err     error
	entries []adminName
	byPath  map[string][]int
	byID    map[hostio.Identity][]int
	byBase  map[string][]int
	// byListed maps the path git lists for an entry, as TreeNamed gives
	// it, to the entry.
	byListed map[string]int
	// unreadable are the entries whose gitdir could not be read.
	unreadable []int
}

// adminName is one admin entry and the path its gitdir names.
type adminName struct {
	key string
	// raw is the gitdir file's content without trailing whitespace (as
	// Git reads it for the path it lists); path is that made absolute
	// against the entry, cleaned, and without its final /.git.
	raw, path string
	// pruneAt is the location git worktree prune checks: the file's
	// content without trailing CR and LF only, made absolute.
	pruneAt string
	// id is path's identity (symlinks followed) when it exists.
	id    hostio.Identity
	hasID bool
	// unreadable says why the gitdir file could not be read.
	unreadable string
}

// TreeNamed is the tree an admin entry's gitdir (or the path git lists for
// it) names: the path cleaned, without a final /.git.
func TreeNamed(p string) string {
	p = filepath.Clean(p)
	if filepath.Base(p) == ".git" {
		return filepath.Dir(p)
	}
	return p
}

// newAdminNames is the lazy reader of repo's admin entries' gitdir files.
func newAdminNames(repo hostio.Repo) *adminNames { return &adminNames{repo: repo} }

// read lists <common>/worktrees and reads every entry's gitdir, once.
func (a *adminNames) read() *adminNames {
	a.once.Do(func() {
		a.byPath, a.byID, a.byBase, a.byListed = map[string][]int{}, map[hostio.Identity][]int{}, map[string][]int{}, map[string]int{}
		keys, err := adminKeys(a.repo)
		if err != nil {
			a.err = err
			return
		}
		for _, key := range keys {
			n, ok := readAdminName(a.repo, key)
			if !ok {
				continue
			}
			i := len(a.entries)
			a.entries = append(a.entries, n)
			if n.unreadable != "" {
				a.unreadable = append(a.unreadable, i)
				continue
			}
			a.byPath[n.path] = append(a.byPath[n.path], i)
			a.byListed[TreeNamed(n.raw)] = i
			a.byBase[filepath.Base(n.path)] = append(a.byBase[filepath.Base(n.path)], i)
			if n.hasID {
				a.byID[n.id] = append(a.byID[n.id], i)
			}
		}
	})
	return a
}

// readAdminName reads the gitdir of <common>/worktrees/key as git does
// (parseAdminGitdir). An entry without a gitdir file names no path (git
// lists none for it); one that cannot be read is kept as unreadable.
func readAdminName(repo hostio.Repo, key string) (adminName, bool) {
	admin := repo.AdminDir(key)
	b, err := safefile.ReadFollowing(filepath.Join(admin, "gitdir"), SmallFileLimit)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return adminName{}, false // no gitdir, or an entry that is no directory
	case err != nil:
		return adminName{key: key, unreadable: err.Error()}, true
	}
	n, ok := parseAdminGitdir(admin, b)
	if !ok {
		return adminName{}, false
	}
	n.key = key
	if n.unreadable == "" {
		if id, err := hostio.IdentityOf(n.path); err == nil {
			n.id, n.hasID = id, true
		}
	}
	return n, true
}

// parseAdminGitdir reads the content b of the gitdir file of the admin
// entry admin as git does: trailing whitespace dropped for the path git
// lists (relative to the entry when not absolute; the tree is that path
// cleaned, without a final /.git), trailing CR and LF only for the
// location git worktree prune checks. An empty file names no path (false);
// a NUL byte, which git would take for the path's end, is refused rather
// than guessed at (decision 0197): the path it names is unknown.
func parseAdminGitdir(admin string, b []byte) (adminName, bool) {
	raw := strings.TrimRight(string(b), " \t\n\v\f\r")
	pruneAt := strings.TrimRight(string(b), "\r\n")
	switch {
	case raw == "":
		return adminName{}, false // git: an invalid gitdir file, listed for no path
	case strings.ContainsRune(raw, 0):
		return adminName{unreadable: "its gitdir file holds a NUL byte"}, true
	}
	path := raw
	if !filepath.IsAbs(path) {
		path = filepath.Join(admin, path)
	}
	if !filepath.IsAbs(pruneAt) {
		pruneAt = filepath.Join(admin, pruneAt)
	}
	return adminName{raw: raw, path: TreeNamed(path), pruneAt: pruneAt}, true
}

// OtherEntries lists the admin entries other than the tree's own (neither
// key nor own, the key path/.git names) whose gitdir names path: exactly,
// or another spelling of it (a trailing slash, a relative path, without
// /.git, through a symlink: the same directory by device and inode while
// it exists, the same name in the same parent directory once it is gone).
// present and id say what lstat found at path. An entry whose gitdir
// cannot be read is listed too (it may name path), and so is one standing
// for the whole registry when <common>/worktrees cannot be listed. An
// inventory of one tree answers only when asked is set (an assessment's
// observation): it reads every entry then, as git does for any command
// about one tree.
func (inv Inventory) OtherEntries(path, key, own string, present bool, id hostio.Identity, asked bool) []machine.AdminEntry {
	if inv.names == nil || inv.partial && !asked {
		return nil
	}
	a := inv.names.read()
	if a.err != nil {
		dir := filepath.Join(a.repo.CommonDir, "worktrees")
		return []machine.AdminEntry{{Dir: dir, CommonDir: a.repo.CommonDir, Unreadable: a.err.Error()}}
	}
	path = filepath.Clean(path)
	var hits []int
	hits = append(hits, a.byPath[path]...)
	if present {
		hits = append(hits, a.byID[id]...)
	} else if cands := a.byBase[filepath.Base(path)]; len(cands) > 0 {
		if parent, err := hostio.IdentityOf(filepath.Dir(path)); err == nil {
			for _, i := range cands {
				if pid, err := hostio.IdentityOf(filepath.Dir(a.entries[i].path)); err == nil && pid == parent {
					hits = append(hits, i)
				}
			}
		}
	}
	hits = append(hits, a.unreadable...)
	slices.Sort(hits)
	var out []machine.AdminEntry
	for _, i := range slices.Compact(hits) {
		n := a.entries[i]
		if n.key == key || own != "" && n.key == own {
			continue
		}
		out = append(out, otherEntry(a.repo, n))
	}
	return out
}

// TreeOf is the tree a path git lists names, resolved as OtherEntries
// resolves a gitdir: an entry whose gitdir spells listed (git 2.39 lists a
// relative gitdir as it is written) names the path it resolves to; any
// other listed path is TreeNamed(listed). It reads the admin entries once
// per inventory.
func (inv Inventory) TreeOf(listed string) string {
	if inv.names != nil {
		if a := inv.names.read(); a.err == nil {
			if i, ok := a.byListed[TreeNamed(listed)]; ok {
				return a.entries[i].path
			}
		}
	}
	return TreeNamed(listed)
}

// indexListed fills byPath from git's listing. A path git lists more than
// once (another admin entry names it too) is the entry whose HEAD is the
// HEAD of the entry the path's own .git names: git's listing does not say
// which key each is, and the other entry's HEAD is not the tree's.
func (inv *Inventory) indexListed(repo hostio.Repo) {
	listed := map[string]int{}
	for i, e := range inv.Entries {
		p := filepath.Clean(e.Path)
		inv.byPath[p] = i
		listed[p]++
	}
	for p, n := range listed {
		if n < 2 {
			continue
		}
		if j, ok := ownListed(repo, inv.Entries, p); ok {
			inv.byPath[p] = j
		}
	}
}

// ownListed finds, among the entries listed at path, the one whose HEAD
// is that of the admin entry path/.git names.
func ownListed(repo hostio.Repo, entries []WorktreeEntry, path string) (int, bool) {
	key := AdminKeyOf(repo, path)
	if key == "" {
		return 0, false
	}
	own, err := readHeadOf(filepath.Join(repo.AdminDir(key), "HEAD"))
	if err != nil {
		return 0, false
	}
	found, n := 0, 0
	for i, e := range entries {
		if filepath.Clean(e.Path) == path && (own.Branch != "" && e.Branch == own.Branch || own.Branch == "" && e.Detached && e.Head == own.Head) {
			found, n = i, n+1
		}
	}
	return found, n == 1
}

// otherEntry reads what an other admin entry holds: its HEAD, its custody
// ready marker, its lock and whether git would prune it.
func otherEntry(repo hostio.Repo, n adminName) machine.AdminEntry {
	admin := repo.AdminDir(n.key)
	e := machine.AdminEntry{Key: n.key, Dir: admin, CommonDir: repo.CommonDir, Names: n.raw, Unreadable: n.unreadable}
	if n.unreadable != "" {
		return e
	}
	if head, err := readHeadOf(filepath.Join(admin, "HEAD")); err == nil {
		e.Head, e.Branch = head.Head, strings.TrimPrefix(head.Branch, "refs/heads/")
	}
	if b, err := safefile.Read(filepath.Join(admin, MarkerName), SmallFileLimit); err == nil {
		e.Marker = strings.TrimSpace(string(b))
	}
	if pi := hostio.Lstat(filepath.Join(admin, "locked")); pi.State != machine.PathAbsent {
		e.Locked = true
		if b, err := safefile.Read(filepath.Join(admin, "locked"), SmallFileLimit); err == nil {
			e.LockReason = strings.TrimSpace(string(b))
		}
	}
	if _, err := os.Stat(n.pruneAt); errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		e.Prunable = true
	}
	return e
}
