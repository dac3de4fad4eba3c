package observe

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/custody-sh/custody/machine"
)

// ObserveArchiveStrip reads what a strip decides over, from the scratch
// repository gitDir that holds both trees: every file and link of
// worktreeTree with its mode and size, the paths of headTree's files, the
// CACHEDIR.TAG files of worktreeTree that begin with the standard
// signature and the target of each of its links. It reads no file of any
// tree on disk and decides nothing.
func ObserveArchiveStrip(ctx context.Context, g *Git, gitDir, headTree, worktreeTree string, nested []string) (machine.ArchiveStripFacts, error) {
	f := machine.ArchiveStripFacts{LinkTargets: map[string]string{}, Nested: nested}
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
		size, err := strconv.ParseInt(fs[3], 10, 64)
		if err != nil {
			return f, fmt.Errorf("list the archive's tree %s: size of %q: %w", worktreeTree, name, err)
		}
		p := string(name)
		f.Entries = append(f.Entries, machine.ArchiveTreeEntry{Path: p, Mode: fs[0], Size: size})
		if fs[0] == "120000" || path.Base(p) == "CACHEDIR.TAG" {
			oids[p] = fs[2]
		}
	}
	out, err = scratchGit(ctx, g, gitDir, nil, nil, "ls-tree", "-r", "-z", "--name-only", "--full-tree", headTree)
	if err != nil {
		return f, fmt.Errorf("list HEAD's tree %s: %w", headTree, err)
	}
	for _, p := range bytes.Split(bytes.TrimSuffix(out, []byte{0}), []byte{0}) {
		if len(p) > 0 {
			f.Head = append(f.Head, string(p))
		}
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
		if e.Mode == "120000" {
			f.LinkTargets[e.Path] = string(b)
		} else if bytes.HasPrefix(b, []byte(machine.CacheDirSignature)) {
			f.SignedTags = append(f.SignedTags, e.Path)
		}
	}
	return f, nil
}
