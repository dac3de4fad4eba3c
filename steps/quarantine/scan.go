package quarantine

import (
	"errors"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/steps/failpoint"
)

// The check of a quarantine and its deletion use the same directories:
// each is opened once, relative to its parent, as the check lists it
// (qdir), and every entry is observed and deleted relative to it. What the
// check listed is kept (names and inode numbers), and every directory is
// listed again right before the first deletion, before the .git files go
// and before the directories go: any entry added (a file written, renamed
// or hard-linked in, a directory made), replaced (another inode under a
// checked name) or taken away since the check stops the removal there.

// errNotTheDir is why a directory opened again is refused: it is not the
// one the check listed.
var errNotTheDir = errors.New("not the directory the check listed")

// errRenameUnsupported is why a file is deleted by its own name: the
// directory cannot rename it aside without the risk of replacing an entry.
var errRenameUnsupported = errors.New("no rename that never replaces")

// asidePrefix starts the name a file is renamed to, in its own directory,
// right before it is checked a last time and deleted: whatever takes its
// own name after that (an editor's save renamed over it) is never deleted.
const asidePrefix = ".custody-deleting-"

// qent is one entry of a quarantine's directory as a listing gave it.
type qent struct {
	name string
	ino  uint64
}

// qnode is one directory of a quarantine as the check listed it.
type qnode struct {
	parent          *qnode
	name, path, rel string
	// fi is what the check saw of it (from its parent), id its device and
	// inode.
	fi fs.FileInfo
	id [2]uint64
	// dir is the open directory while held is set; a directory beyond the
	// budget is opened again from its parent when needed (qscan.open).
	dir  qdir
	held bool
	// ents are its entries as the check listed them, sorted by name.
	ents []qent
}

// qscan is what the check of a quarantine saw, with its directories held.
type qscan struct {
	// nodes are every directory, each before those below it; nodes[0]
	// is the quarantine.
	nodes []*qnode
	files []quarantinedFile
	// gitfiles are the bytes of each .git file the check found as git
	// writes it, by relative path: what a stopped removal writes back.
	gitfiles map[string][]byte
	// aside are the files a killed deletion left renamed aside: the path
	// relative to the quarantine of each, by the path of the file it was.
	aside  map[string]string
	budget int
	// rootDirs counts the directories right below the quarantine the
	// walk has entered (the pause point apply/during-check).
	rootDirs int
	// opened, when set, is told the path of every file whose content the
	// check reads.
	opened func(string)
}

// scanQuarantine checks every entry of q against m, relative to its open
// directory, and returns what it saw, or the first entry m does not allow
// with why (an unreadable directory is a stray: what it holds is
// unknown). When checked is set, it records there what lstat said of each
// regular file it read and found HEAD's. It holds at most budget
// directories open (qdirBudget when 0). The scan is never nil; close it.
func scanQuarantine(q string, m Manifest, idLen int, checked map[string]fs.FileInfo, budget int) (sc *qscan, stray, why string) {
	return scanQuarantineOpened(q, m, idLen, checked, budget, nil)
}

// scanQuarantineOpened is scanQuarantine that tells opened (when set) the
// path of every file whose content it reads.
func scanQuarantineOpened(q string, m Manifest, idLen int, checked map[string]fs.FileInfo, budget int, opened func(string)) (sc *qscan, stray, why string) {
	if budget <= 0 {
		budget = qdirBudget()
	}
	sc = &qscan{budget: budget, gitfiles: map[string][]byte{}, aside: map[string]string{}, opened: opened}
	d, fi, err := openQuarantineRoot(q)
	if err != nil {
		return sc, q, "unreadable: " + err.Error()
	}
	root := &qnode{path: q, fi: fi, dir: d, held: true, id: d.id}
	sc.budget--
	stray, why = sc.walk(root, m, idLen, checked)
	return sc, stray, why
}

// walk lists n (open), checks each entry and walks each directory below.
func (sc *qscan) walk(n *qnode, m Manifest, idLen int, checked map[string]fs.FileInfo) (stray, why string) {
	sc.nodes = append(sc.nodes, n) // before anything can fail: close releases it
	ents, err := n.dir.list()
	if err != nil {
		return n.path, "unreadable: " + err.Error()
	}
	n.ents = ents
	for _, e := range ents {
		p, listed := filepath.Join(n.path, e.name), path.Join(n.rel, e.name)
		fi, err := n.dir.stat(e.name)
		if err != nil {
			return p, "unreadable: " + err.Error()
		}
		rel := listed
		if !fi.IsDir() {
			rel = m.listedAs(listed)
		}
		w, gitfile := m.check(rel, p, fi, idLen, sc.opened)
		if w != "" {
			return p, w
		}
		if !fi.IsDir() {
			// The inode lstat gave (a listing's may differ, on overlayfs):
			// the deletion requires the same.
			ino := e.ino
			if id, ok := devIno(fi); ok {
				ino = id[1]
			}
			sc.files = append(sc.files, quarantinedFile{path: p, rel: rel, node: n, name: e.name, ino: ino})
			if listed != rel {
				sc.aside[rel] = listed
			}
			if checked != nil && fi.Mode().IsRegular() {
				checked[p] = fi
			}
			if gitfile != nil {
				sc.gitfiles[rel] = gitfile
			}
			continue
		}
		d, err := n.dir.sub(e.name, fi)
		if err != nil {
			return p, "it is no longer the directory the check listed: " + err.Error()
		}
		c := &qnode{parent: n, name: e.name, path: p, rel: rel, fi: fi, id: d.id, dir: d}
		if n.parent == nil {
			// The check has read one directory below the tree's top and
			// is about to read the next (in name order).
			if sc.rootDirs++; sc.rootDirs == 2 {
				failpoint.Pause("apply/during-check")
			}
		}
		if sc.budget > 0 {
			c.held = true
			sc.budget--
		}
		stray, why = sc.walk(c, m, idLen, checked)
		if !c.held {
			d.close()
			c.dir = qdir{}
		}
		if stray != "" {
			return stray, why
		}
	}
	return "", ""
}

// listedAs is the path m knows the entry rel by: rel, or for a file a
// killed deletion renamed aside (asidePrefix) the file it was, when m
// lists that and not rel. It is checked as that file.
func (m Manifest) listedAs(rel string) string {
	dir, name := path.Split(rel)
	if orig, ok := strings.CutPrefix(name, asidePrefix); ok && orig != "" {
		if _, listed := m[rel]; !listed {
			if _, ok := m[dir+orig]; ok {
				return dir + orig
			}
		}
	}
	return rel
}

// close releases every directory sc holds.
func (sc *qscan) close() {
	for _, n := range sc.nodes {
		if n.held {
			n.dir.close()
		}
	}
}

// open returns n's directory, opened again from its parent (and checked
// to be the one the check listed) when it is not held, with what releases
// it.
func (sc *qscan) open(n *qnode) (qdir, func(), error) {
	if n.held {
		return n.dir, func() {}, nil
	}
	p, done, err := sc.open(n.parent)
	if err != nil {
		return qdir{}, nil, err
	}
	d, err := p.sub(n.name, n.fi)
	done()
	if err != nil {
		return qdir{}, nil, err
	}
	return d, d.close, nil
}

// reread lists every directory of sc again and returns the first entry
// that is not as the check listed it, with why: one added, one under a
// checked name with another inode, one gone that is not in deleted (the
// relative paths this removal deleted). "" when every directory holds
// exactly what the check saw, less what was deleted.
func (sc *qscan) reread(deleted map[string]bool) (stray, why string) {
	root := sc.nodes[0]
	if pi := hostio.Lstat(root.path); pi.State != machine.PathPresent || !pi.IsDir || pi.IsSymlink || [2]uint64{pi.Dev, pi.Ino} != root.id {
		return root.path, "the quarantine is no longer the directory the check read"
	}
	for _, n := range sc.nodes {
		d, done, err := sc.open(n)
		if err != nil {
			return n.path, "it is no longer the directory the check read: " + err.Error()
		}
		now, err := d.list()
		done()
		if err != nil {
			return n.path, "unreadable: " + err.Error()
		}
		if s, w := n.changed(now, deleted); s != "" {
			return s, w
		}
	}
	return "", ""
}

// changed compares now, a listing of n, with what the check listed, less
// the entries deleted: the first entry added, replaced or gone, and why.
func (n *qnode) changed(now []qent, deleted map[string]bool) (stray, why string) {
	was := make(map[string]uint64, len(n.ents))
	for _, e := range n.ents {
		was[e.name] = e.ino
	}
	seen := make(map[string]bool, len(now))
	for _, e := range now {
		p, rel := filepath.Join(n.path, e.name), path.Join(n.rel, e.name)
		ino, ok := was[e.name]
		switch {
		case !ok:
			return p, "it appeared after the check read " + n.shown()
		case deleted[rel]:
			return p, "it appeared in place of a file the removal had checked and deleted"
		case ino != e.ino:
			return p, "it was replaced after the check read it"
		}
		seen[e.name] = true
	}
	for _, e := range n.ents {
		if rel := path.Join(n.rel, e.name); !seen[e.name] && !deleted[rel] {
			return filepath.Join(n.path, e.name), "it was moved or deleted after the check read it"
		}
	}
	return "", ""
}

// shown names n in a reason: its path relative to the tree, or "the tree".
func (n *qnode) shown() string {
	if n.rel == "" {
		return "the tree"
	}
	return n.rel + "/"
}

// remove deletes the file f, only while its directory is still at its
// path (a directory swapped or moved away since the check is never
// deleted from), and only once verify, given what lstat (relative to the
// open directory) says of it now, finds it still what the check saw. It
// then renames f aside in its directory (asidePrefix, never over an
// entry) and deletes it there only when it is still the inode just
// verified, with the same size and modification time: a file saved over
// f's name between the verification and the deletion (an editor's
// rename) is renamed back and kept, and one saved over it once it is
// aside is another entry, which the next listing finds. Where nothing can
// be renamed aside (a name too long, a filesystem that cannot rename
// without replacing, a name already taken), f is deleted by its name
// right after its verification. It returns why it did not delete f, or
// the error deleting it met.
func (sc *qscan) remove(f quarantinedFile, verify func(quarantinedFile, fs.FileInfo) string, c *dirCache) (string, error) {
	n := f.node
	if pi := hostio.Lstat(n.path); pi.State != machine.PathPresent || !pi.IsDir || pi.IsSymlink || [2]uint64{pi.Dev, pi.Ino} != n.id {
		return "the directory holding it is no longer the one the check read", nil
	}
	d, err := c.get(n)
	if err != nil {
		return "the directory holding it is no longer the one the check read: " + err.Error(), nil
	}
	fi, err := d.stat(f.name)
	if err != nil {
		return "unreadable: " + err.Error(), nil
	}
	if !sameIno(fi, f.ino) {
		return "it was replaced after the check read it", nil
	}
	if why := verify(f, fi); why != "" {
		return why, nil
	}
	aside := asidePrefix + f.name
	if strings.HasPrefix(f.name, asidePrefix) {
		return "", d.unlink(f.name)
	}
	switch err := d.rename(f.name, aside); {
	case err == nil:
		failpoint.At("apply/after-aside")
	case errors.Is(err, fs.ErrNotExist):
		return "it was moved or deleted after the check read it", nil
	case errors.Is(err, errRenameUnsupported), errors.Is(err, syscall.ENAMETOOLONG), errors.Is(err, fs.ErrExist):
		return "", d.unlink(f.name)
	default:
		return "", err
	}
	if now, err := d.stat(aside); err == nil && sameAside(fi, now) {
		return "", d.unlink(aside)
	}
	why := "it was replaced after the check read it"
	if err := d.rename(aside, f.name); err != nil {
		why += "; it is kept as " + filepath.Join(n.path, aside)
	}
	return why, nil
}

// dirCache keeps, for one deleting goroutine, the last directory it had
// to open again (one not held): the files of a directory come one after
// another, so each is opened again once, not once per file.
type dirCache struct {
	sc   *qscan
	node *qnode
	dir  qdir
	done func()
}

// get returns n's directory: held, the one kept, or opened again.
func (c *dirCache) get(n *qnode) (qdir, error) {
	if n.held {
		return n.dir, nil
	}
	if c.node == n {
		return c.dir, nil
	}
	c.close()
	d, done, err := c.sc.open(n)
	if err != nil {
		return qdir{}, err
	}
	c.node, c.dir, c.done = n, d, done
	return d, nil
}

// close releases the directory kept.
func (c *dirCache) close() {
	if c.done != nil {
		c.done()
	}
	c.node, c.dir, c.done = nil, qdir{}, nil
}

// sameIno reports whether fi is of inode ino, where the system gives
// inode numbers.
func sameIno(fi fs.FileInfo, ino uint64) bool {
	id, ok := devIno(fi)
	return !ok || id[1] == ino
}

// removeDirs deletes every directory of sc, deepest first, each only when
// empty, relative to its parent's open directory; the quarantine itself
// last. It returns the first that could not be deleted, with the error.
func (sc *qscan) removeDirs() (string, error) {
	for i := len(sc.nodes) - 1; i >= 1; i-- {
		n := sc.nodes[i]
		p, done, err := sc.open(n.parent)
		if err != nil {
			return n.parent.path, err
		}
		err = p.rmdir(n.name)
		done()
		if err != nil {
			return n.path, err
		}
	}
	q := sc.nodes[0].path
	if err := syscall.Rmdir(q); err != nil {
		return q, &fs.PathError{Op: "remove", Path: q, Err: err}
	}
	return "", nil
}
