package gitfiles

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/custody-sh/custody/machine"
)

// cacheTree is an index's cache tree (its TREE extension) as git reads
// it: for directories of the index, the tree id git last wrote or read
// for them and how many index entries that tree covers. Git trusts it
// without looking at the entries: comparing the index with HEAD (git
// status, git diff --cached, git stash, git commit), it skips every
// directory whose node is valid and names HEAD's tree for it, together
// with as many index entries as the node counts. A node that no longer
// tells the truth about the entries therefore hides a staged change from
// all of them (decision 0210).
type cacheTree struct {
	// present says the index has a cache tree git reads.
	present bool
	// regular says every node has a name git can find it by (no empty
	// child name, none with a slash, no directory twice): only then do
	// the nodes listed say which directories git skips.
	regular bool
	nodes   []cacheTreeNode
}

// cacheTreeNode is one directory of a cache tree.
type cacheTreeNode struct {
	// path is the directory's slash path, "" for the root.
	path string
	// entries is how many index entries the node covers; below 0 when git
	// invalidated it (it is then not used).
	entries int
	// id is the tree id the node names, when entries >= 0.
	id string
}

// cacheTreeDepthLimit bounds how deep a cache tree custody reads; a deeper
// one is taken as none, which only ever sends a tree to git status.
const cacheTreeDepthLimit = 4096

// parseCacheTree reads the body of a TREE extension as git's
// cache_tree_read does: each node is its name, NUL, its entry count and
// the number of its subtrees in decimal, a newline, the tree id (raw, when
// the count is not negative), then its subtrees. A body git would not read
// is the zero cacheTree (git drops it too); one custody cannot read as
// strictly as it needs is present but not regular, so nothing takes it as
// proof.
func parseCacheTree(b []byte, hashLen int) cacheTree {
	c := cacheTree{present: true, regular: true}
	pos := 0
	var one func(prefix string, root bool, depth int) bool
	one = func(prefix string, root bool, depth int) bool {
		if depth > cacheTreeDepthLimit {
			return false
		}
		end := bytes.IndexByte(b[pos:], 0)
		if end < 0 {
			return false
		}
		name := string(b[pos : pos+end])
		pos += end + 1
		nl := bytes.IndexByte(b[pos:], '\n')
		if nl < 0 {
			return false
		}
		countText, subText, ok := strings.Cut(string(b[pos:pos+nl]), " ")
		count, err1 := strconv.Atoi(countText)
		subs, err2 := strconv.Atoi(subText)
		if !ok || err1 != nil || err2 != nil || subs < 0 || subs > len(b) {
			// Git parses with strtol, which takes more than this: a node
			// custody reads otherwise than git is no proof of anything.
			c.regular = false
			return false
		}
		pos += nl + 1
		p := name
		switch {
		case root && name != "":
			return false // git: "not the whole tree"
		case root:
		case name == "" || strings.Contains(name, "/"):
			c.regular = false
		case prefix != "":
			p = prefix + "/" + name
		}
		n := cacheTreeNode{path: p, entries: count}
		if count >= 0 {
			if len(b)-pos < hashLen {
				return false
			}
			n.id = hex.EncodeToString(b[pos : pos+hashLen])
			pos += hashLen
		}
		c.nodes = append(c.nodes, n)
		for i := 0; i < subs; i++ {
			if !one(p, false, depth+1) {
				return false
			}
		}
		return true
	}
	if !one("", true, 0) {
		if !c.regular {
			return cacheTree{present: true}
		}
		return cacheTree{}
	}
	seen := make(map[string]bool, len(c.nodes))
	for _, n := range c.nodes {
		if seen[n.path] {
			// Git dies reading a directory twice ("cache-tree: internal
			// error"): its status fails, and nothing here is proof.
			c.regular = false
		}
		seen[n.path] = true
	}
	return c
}

// cacheTreeCheck is what a cache tree says against the trees an index's
// entries make (indexTrees).
type cacheTreeCheck struct {
	// complete says every directory the entries make, the root included,
	// has a valid node naming exactly its tree and entry count: comparing
	// the index with a HEAD whose tree the entries make, git reads no tree
	// object below the root.
	complete bool
	// stale lists the directories ("" the root) whose valid node names
	// another tree or entry count than the entries make, deepest only (a
	// node above a stale one is stale too): there git does not see the
	// index as its entries are.
	stale []string
}

// check compares c with dirs, what the entries make of each directory.
func (c cacheTree) check(dirs map[string]dirTree) cacheTreeCheck {
	var out cacheTreeCheck
	good := 0
	for _, n := range c.nodes {
		if n.entries < 0 {
			continue
		}
		d, ok := dirs[n.path]
		switch {
		case !ok && n.entries == 0:
			// Covers nothing: git never skips by a node of no entries.
		case !ok || d.id != n.id || d.entries != n.entries:
			out.stale = append(out.stale, n.path)
		default:
			good++
		}
	}
	out.complete = c.present && c.regular && len(out.stale) == 0 && good == len(dirs)
	out.stale = deepestOnly(out.stale)
	return out
}

// deepestOnly drops every directory of dirs ("" the root) that has another
// of dirs below it.
func deepestOnly(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		below := false
		for _, e := range dirs {
			if e != d && (d == "" || strings.HasPrefix(e, d+"/")) {
				below = true
				break
			}
		}
		if !below {
			out = append(out, d)
		}
	}
	return out
}

// StaleIndexView is what the status path adds to its observation of the
// tree at dir when git's view of its index is not the index's entries, so
// that git status, clean, may hide a staged change (decision 0210): a
// stale-cache-tree refusal for each deepest directory below the root whose
// Cache tree node names another tree or entry count than the entries make.
// The root's node is not used by status, which compares the root's
// entries one by one.
//
// The entries are those custody read (idx); for an index whose entries
// custody did not read but whose cache tree it did (a split index), those
// Git ls-files listed (ents), when status reports no change (so none is
// intent-to-add). An index with an intent-to-add entry, or that does not
// make a tree (an unmerged path), gets nothing: status reports what keeps
// the tree. Where custody has no cache tree at all to hold the entries
// Git listed to (a sparse index, say), they are held to HEAD's tree id
// instead, when it is known (tree): a status that reports no change at
// all says the index is HEAD's, and entries that make another tree say
// Git saw them otherwise.
func StaleIndexView(dir string, idx IndexFile, ents []IndexEntry, st machine.Status, tree string) []machine.Hidden {
	var hs []machine.Hidden
	read := idx.Ents
	if read == nil && idx.Cache.present && len(st.Changed) == 0 && len(st.Unmerged) == 0 {
		// An index custody did not read the entries of (a split index):
		// its cache tree against the entries git listed, which, with
		// nothing changed, hold no intent-to-add entry.
		read = ents
	}
	if read != nil && !idx.Ita && idx.Cache.present && len(read) > 0 {
		_, dirs, err := IndexTrees(FormatOf(read[0].OID), read)
		if err != nil {
			// Not a tree git writes (an unmerged path, say): git status
			// reports what keeps the tree, and the cache tree is not used.
			return nil
		}
		byPath := make(map[string]cacheTreeNode, len(idx.Cache.nodes))
		for _, n := range idx.Cache.nodes {
			byPath[n.path] = n
		}
		for _, d := range idx.Cache.check(dirs).stale {
			if d == "" {
				// Git compares the root's entries one by one whatever its
				// node says: status sees them as they are.
				continue
			}
			n, made := byPath[d], dirs[d]
			name := d + "/"
			made.id = orNoTree(made.id)
			hs = append(hs, machine.Hidden{Code: machine.CodeStaleCacheTree, Path: filepath.Join(dir, filepath.FromSlash(d)),
				Detail: fmt.Sprintf("the index's cache tree names tree %s of %d entries for %s, but its entries there make %s of %d: git status, diff --cached, stash and commit trust the cache tree, so what is staged there is not what git shows",
					n.id, n.entries, name, made.id, made.entries)})
		}
		return hs
	}
	if read == nil && ents != nil && tree != "" && len(st.Changed) == 0 && len(st.Unmerged) == 0 {
		if id, err := IndexTreeID(FormatOf(tree), ents); err == nil && id != tree {
			hs = append(hs, machine.Hidden{Code: machine.CodeStaleCacheTree, Path: dir,
				Detail: fmt.Sprintf("the index's entries make tree %s, not HEAD's %s, yet git status reports nothing staged: git trusts a cache tree that does not match the entries", id, tree)})
		}
	}
	return hs
}

// orNoTree is id, or "no tree" when the entries make none there.
func orNoTree(id string) string {
	if id == "" {
		return "no tree"
	}
	return id
}

// reads lists the directories below the root whose tree git reads when it
// compares an index whose entries make dirs with a HEAD whose trees they
// make: each with no valid node naming its tree and entry count at itself
// or at a directory above it (there git skips everything below).
func (c cacheTree) reads(dirs map[string]dirTree) []string {
	truthful := map[string]bool{}
	for _, n := range c.nodes {
		if d, ok := dirs[n.path]; ok && n.entries >= 0 && d.id == n.id && d.entries == n.entries {
			truthful[n.path] = true
		}
	}
	var out []string
	for d := range dirs {
		if d == "" {
			continue
		}
		skipped := false
		for p := d; p != "."; p = path.Dir(p) {
			if truthful[p] {
				skipped = true
				break
			}
		}
		if !skipped {
			out = append(out, d)
		}
	}
	sort.Strings(out)
	return out
}
