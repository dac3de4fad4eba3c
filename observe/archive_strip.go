package observe

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
)

// ObserveArchiveStrip reads what a strip decides over for the archive
// whose manifest is m, from the scratch repository gitDir that holds both
// of its trees: every file and link of m.WorktreeTree with its mode and
// size, HEAD's entries (m.HeadTree), the CACHEDIR.TAG files of the
// archive's tree that begin with the standard signature, the target of
// each of its links and the content of each regular pyvenv.cfg (when it
// is no longer than a tree on disk has read of one); and from m the
// nested repositories, the empty directories, the status captured with
// the tree and the build output left out. It reads no file of any tree on
// disk and decides nothing.
func ObserveArchiveStrip(ctx context.Context, g *hostio.Git, gitDir string, m machine.ArchiveManifest) (machine.ArchiveStripFacts, error) {
	f := machine.ArchiveStripFacts{LinkTargets: map[string]string{}, PyvenvCfgs: map[string]string{}, EmptyDirs: m.EmptyDirs, Done: m.BuildOutputPaths()}
	for _, n := range m.Nested {
		f.Nested = append(f.Nested, n.Path)
	}
	if m.Status != nil {
		f.Status = *m.Status
	}
	worktreeTree := m.WorktreeTree
	out, err := scratchGit(ctx, g, gitDir, nil, nil, "ls-tree", "-r", "-l", "-z", "--full-tree", worktreeTree)
	if err != nil {
		return f, fmt.Errorf("list the archive's tree %s: %w", worktreeTree, err)
	}
	oids := map[string]string{}
	for _, rec := range bytes.Split(bytes.TrimSuffix(out, []byte{0}), []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		meta, name, ok := bytes.Cut(rec, []byte{'\t'})
		fs := strings.Fields(string(meta))
		if !ok || len(fs) != 4 {
			return f, fmt.Errorf("list the archive's tree %s: unexpected line %q", worktreeTree, rec)
		}
		var size int64
		if fs[3] != "-" { // a gitlink has no size
			if size, err = strconv.ParseInt(fs[3], 10, 64); err != nil {
				return f, fmt.Errorf("list the archive's tree %s: size of %q: %w", worktreeTree, name, err)
			}
		}
		p := string(name)
		f.Entries = append(f.Entries, machine.ArchiveTreeEntry{Path: p, Mode: fs[0], Size: size})
		base := path.Base(p)
		if fs[0] == "120000" || (fs[0] != "160000" && (base == "CACHEDIR.TAG" || (base == "pyvenv.cfg" && size <= buildFileLimit))) {
			oids[p] = fs[2]
		}
	}
	out, err = scratchGit(ctx, g, gitDir, nil, nil, "ls-tree", "-r", "-z", "--full-tree", m.HeadTree)
	if err != nil {
		return f, fmt.Errorf("list HEAD's tree %s: %w", m.HeadTree, err)
	}
	head, err := gitfiles.ParseLsTree(out)
	if err != nil {
		return f, fmt.Errorf("list HEAD's tree %s: %w", m.HeadTree, err)
	}
	for _, e := range head {
		f.Head = append(f.Head, machine.TrackedEntry{Path: e.Path, Mode: e.Mode, OID: e.OID})
	}
	for _, e := range f.Entries {
		oid, ok := oids[e.Path]
		if !ok {
			continue
		}
		b, err := scratchGit(ctx, g, gitDir, nil, nil, "cat-file", "blob", oid)
		if err != nil {
			return f, fmt.Errorf("read %s of the archive's tree: %w", e.Path, err)
		}
		switch {
		case e.Mode == "120000":
			f.LinkTargets[e.Path] = string(b)
		case path.Base(e.Path) == "pyvenv.cfg":
			f.PyvenvCfgs[e.Path] = string(b)
		case bytes.HasPrefix(b, []byte(machine.CacheDirSignature)):
			f.SignedTags = append(f.SignedTags, e.Path)
		}
	}
	return f, nil
}

// IndexAndHead reads what a capture records of the tree at dir beyond its
// files: the entries of its index (every stage of a path once, the index
// file of the admin entry adminKey read as the tree's observation reads
// it) and of the tree of the commit head.
func IndexAndHead(ctx context.Context, g *hostio.Git, repo hostio.Repo, dir, adminKey, head string) (index, headEnts []machine.TrackedEntry, err error) {
	ents, err := ReadIndex(ctx, g, repo, dir, adminKey)
	if err != nil {
		return nil, nil, fmt.Errorf("read the index of %s: %w", dir, err)
	}
	for _, e := range ents {
		index = append(index, machine.TrackedEntry{Path: e.Path, Mode: e.Mode, OID: e.OID})
	}
	out, err := g.Observe(ctx, dir, "ls-tree", "-r", "-z", "--full-tree", "--end-of-options", head+"^{tree}")
	if err != nil {
		return nil, nil, fmt.Errorf("list HEAD's tree of %s: %w", dir, err)
	}
	tree, err := gitfiles.ParseLsTree(out)
	if err != nil {
		return nil, nil, fmt.Errorf("list HEAD's tree of %s: %w", dir, err)
	}
	for _, e := range tree {
		headEnts = append(headEnts, machine.TrackedEntry{Path: e.Path, Mode: e.Mode, OID: e.OID})
	}
	return index, headEnts, nil
}
