package gitfiles

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"github.com/custody-sh/custody/observe/hostio"
	"sort"
	"strconv"
	"strings"
)

// IndexTreeID is the id of the tree git would write from ents (an index's
// entries, as ReadIndexFile lists them): the recursive tree whose blobs,
// links and gitlinks are exactly the entries' paths, modes and ids. It is
// an error for an entry at a stage other than 0, with a mode a tree cannot
// hold, an id not of format, or a path git would not write. Equal to a
// Commit's tree id, it proves the entries list that commit's tree exactly.
func IndexTreeID(format ObjectFormat, ents []IndexEntry) (string, error) {
	if err := treeEntriesValid(ents); err != nil {
		return "", err
	}
	return treeOf(format, ents, "", nil)
}

// dirTree is what the entries below one directory make: the tree id and
// how many entries there are.
type dirTree struct {
	id      string
	entries int
}

// IndexTrees is IndexTreeID that also gives what the entries make of
// every directory, by slash path ("" the root): what a cache tree that
// tells the truth names.
func IndexTrees(format ObjectFormat, ents []IndexEntry) (string, map[string]dirTree, error) {
	if err := treeEntriesValid(ents); err != nil {
		return "", nil, err
	}
	dirs := map[string]dirTree{}
	id, err := treeOf(format, ents, "", func(dir string, d dirTree) { dirs[dir] = d })
	if err != nil {
		return "", nil, err
	}
	return id, dirs, nil
}

// treeEntriesValid is nil when ents are entries git writes a tree of: all
// at stage 0, with modes a tree holds, paths git writes, sorted.
func treeEntriesValid(ents []IndexEntry) error {
	for i, en := range ents {
		if en.Stage != 0 {
			return fmt.Errorf("%s is at stage %d", en.Path, en.Stage)
		}
		switch en.Mode {
		case "100644", "100755", "120000", "160000":
		default:
			return fmt.Errorf("%s has mode %s", en.Path, en.Mode)
		}
		if !validTreePath(en.Path) {
			return fmt.Errorf("%q is not a path git writes in a tree", en.Path)
		}
		if i > 0 && ents[i-1].Path >= en.Path {
			return fmt.Errorf("%s is not after %s", en.Path, ents[i-1].Path)
		}
	}
	return nil
}

// validTreePath reports whether p is a relative slash path with no empty,
// "." or ".." component.
func validTreePath(p string) bool {
	for {
		c, rest, more := strings.Cut(p, "/")
		if c == "" || c == "." || c == ".." {
			return false
		}
		if !more {
			return true
		}
		p = rest
	}
}

// treeOf hashes the tree of ents, every one of which is below prefix
// (which is "" or ends in "/"), sorted by path. Visit, when set, is given
// every tree made, by its directory's path ("" the root).
func treeOf(format ObjectFormat, ents []IndexEntry, prefix string, visit func(dir string, d dirTree)) (string, error) {
	type item struct {
		name, mode, oid string
		dir             bool
	}
	items := make([]item, 0, min(len(ents), 64))
	for i := 0; i < len(ents); {
		rel := ents[i].Path[len(prefix):]
		name, _, isDir := strings.Cut(rel, "/")
		if !isDir {
			items = append(items, item{name: name, mode: ents[i].Mode, oid: ents[i].OID})
			i++
			continue
		}
		sub := prefix + name + "/"
		j := i
		for j < len(ents) && strings.HasPrefix(ents[j].Path, sub) {
			j++
		}
		id, err := treeOf(format, ents[i:j], sub, visit)
		if err != nil {
			return "", err
		}
		items = append(items, item{name: name, mode: "40000", oid: id, dir: true})
		i = j
	}
	// Git orders a tree's entries by name, a directory's as if it ended
	// in "/". Entries sorted by path already give that order, so the sort
	// runs only when they do not.
	less := func(a, b item) bool {
		ka, kb := a.name, b.name
		if a.dir {
			ka += "/"
		}
		if b.dir {
			kb += "/"
		}
		return ka < kb
	}
	for i := 1; i < len(items); i++ {
		if less(items[i], items[i-1]) {
			sort.SliceStable(items, func(a, b int) bool { return less(items[a], items[b]) })
			break
		}
	}
	size := 0
	for _, it := range items {
		size += len(it.mode) + len(it.name) + 2 + len(it.oid)/2
	}
	body := make([]byte, 0, size)
	for i, it := range items {
		if i > 0 && items[i-1].name == it.name {
			return "", fmt.Errorf("%s%s is both a file and a directory", prefix, it.name)
		}
		if FormatOf(it.oid) != format {
			return "", fmt.Errorf("%s%s: %q is not a %s object id", prefix, it.name, it.oid, format)
		}
		body = append(append(append(append(body, it.mode...), ' '), it.name...), 0)
		n := len(body)
		body = append(body, make([]byte, len(it.oid)/2)...)
		if _, err := hex.Decode(body[n:], []byte(it.oid)); err != nil {
			return "", fmt.Errorf("%s%s: %q is not a %s object id", prefix, it.name, it.oid, format)
		}
	}
	h := NewHash(format)
	h.Write([]byte("tree " + strconv.Itoa(len(body)) + "\x00"))
	h.Write(body)
	id := hex.EncodeToString(h.Sum(nil))
	if visit != nil {
		visit(strings.TrimSuffix(prefix, "/"), dirTree{id: id, entries: len(ents)})
	}
	return id, nil
}

// CommitTrees asks one `git cat-file --batch-check` for the tree of each
// Commit in commits and returns them by commit id. A commit git does not
// have (or that is not a commit) is absent from the answer.
func CommitTrees(ctx context.Context, g *hostio.Git, repo hostio.Repo, commits []string) (map[string]string, error) {
	out := map[string]string{}
	if len(commits) == 0 {
		return out, nil
	}
	var in bytes.Buffer
	for _, c := range commits {
		if !hostio.IsHexOID(c) {
			return nil, fmt.Errorf("tree of %q: not an object id", c)
		}
		fmt.Fprintf(&in, "%s^{tree}\n", c)
	}
	b, err := g.ObserveInput(ctx, repo.MainCheckout, in.Bytes(), "cat-file", "--batch-check=%(objectname) %(objecttype)")
	if err != nil {
		return nil, fmt.Errorf("trees of %d commits: %w", len(commits), err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != len(commits) {
		return nil, hostio.MalformedAt(BatchCheckWhat, "%d lines for %d commits", len(lines), len(commits))
	}
	for i, line := range lines {
		id, typ, _ := strings.Cut(line, " ")
		if typ == "tree" && hostio.IsHexOID(id) && len(id) == len(commits[i]) {
			out[commits[i]] = id
		}
	}
	return out, nil
}
