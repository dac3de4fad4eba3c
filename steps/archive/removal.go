package archive

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/quarantine"
)

// archiveManifest lists what a tree removed on proof kind archive may
// hold: every file of the archive's worktree_tree (HEAD's tree with
// dirty.patch applied in a scratch index, which must give exactly the
// recorded tree), every entry of each nested repository's image, the
// build-output directories the archive left out, and the tree's .git file. Quarantine then deletes entry by entry only what
// matches, re-hashing each file first.
func archiveManifest(ctx context.Context, e *steps.Env, p *machine.Proof) (quarantine.Manifest, error) {
	a, err := LoadArchive(e, p.Ref)
	if err != nil {
		return nil, fmt.Errorf("archive %s: %w", p.Ref, err)
	}
	m, problems := machine.CheckArchive(observe.ObserveArchiveDir(a.Dir))
	if len(problems) > 0 {
		return nil, &problems[0]
	}
	if m.Head != p.Head {
		return nil, fmt.Errorf("archive %s holds HEAD %s, the proof %s", a.ID, m.Head, p.Head)
	}
	tmp, err := os.MkdirTemp("", "custody-archive-manifest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	w, r, err := rebuildArchiveTree(ctx, e, a.Dir, m, tmp) // strip.go
	if err != nil {
		return nil, err
	}
	if r != nil {
		return nil, r
	}
	git := func(args ...string) ([]byte, error) {
		return w.git([]string{"GIT_INDEX_FILE=" + w.index}, nil, args...)
	}
	ls, err := git("ls-files", "-v", "-s", "-z")
	if err != nil {
		return nil, err
	}
	ents, err := gitfiles.ParseLsFiles(ls)
	if err != nil {
		return nil, fmt.Errorf("scratch index of archive %s: %w", a.ID, err)
	}
	qm := quarantine.Manifest{".git": {Kind: "gitfile"}}
	for _, ent := range ents {
		switch ent.Mode {
		case "100644":
			qm[ent.Path] = quarantine.Entry{Kind: "file", OID: ent.OID}
		case "100755":
			qm[ent.Path] = quarantine.Entry{Kind: "file", Exec: true, OID: ent.OID}
		case "120000":
			qm[ent.Path] = quarantine.Entry{Kind: "link", OID: ent.OID}
		default:
			return nil, fmt.Errorf("archive %s: %s has mode %s, which a tree removed on an archive may not hold", a.ID, ent.Path, ent.Mode)
		}
	}
	format := gitfiles.ObjectFormat(m.ObjectFormat)
	for _, n := range m.Nested {
		if err := addImage(qm, filepath.Join(a.Dir, n.Image), n.Path, format); err != nil {
			return nil, err
		}
	}
	// The build output the archive left out goes with the tree, as in a
	// plain removal: quarantine classifies each directory again first.
	for _, d := range m.BuildOutput {
		if _, ok := qm[d.Path]; ok {
			return nil, fmt.Errorf("archive %s: build output %s is also in its tree", a.ID, d.Path)
		}
		qm[d.Path] = quarantine.Entry{Kind: "discard", Build: d.Kind}
	}
	return qm, nil
}

// addImage adds every file and link of the tar image at file, below the
// nested root rel, to qm.
func addImage(qm quarantine.Manifest, file, rel string, format gitfiles.ObjectFormat) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("image %s: %w", file, err)
		}
		p := path.Join(rel, strings.TrimSuffix(hdr.Name, "/"))
		switch hdr.Typeflag {
		case tar.TypeDir:
		case tar.TypeSymlink:
			qm[p] = quarantine.Entry{Kind: "link", OID: gitfiles.BlobID(format, []byte(hdr.Linkname))}
		case tar.TypeReg:
			b, err := io.ReadAll(tr)
			if err != nil {
				return err
			}
			qm[p] = quarantine.Entry{Kind: "file", Exec: hdr.Mode&0o100 != 0, OID: gitfiles.BlobID(format, b)}
		default:
			return fmt.Errorf("image %s: entry %q of type %c", file, hdr.Name, hdr.Typeflag)
		}
	}
}

// archiveSoleCopy records, once a tree removed on proof kind archive is
// gone, that its archive is now the only copy of its work (active →
// finished). An archive that no longer verifies stays active and says so.
// It runs before the removal completes, while the removal intent stands:
// a run killed before it settles the removal again, and calls it again
// (an archive already finished is left as it is).
func archiveSoleCopy(ctx context.Context, e *steps.Env, rec machine.Record) error {
	if rec.Intent == nil || rec.Intent.Proof == nil || rec.Intent.Proof.Kind != machine.ProofArchive {
		return nil
	}
	a, err := LoadArchive(e, rec.Intent.Proof.Ref)
	if err != nil || a.State != machine.StateActive {
		return err
	}
	gone, err := present(a.Path)
	if err != nil {
		return err
	}
	_, problems := machine.CheckArchive(observe.ObserveArchiveDir(a.Dir))
	_, err = fireArchive(ctx, e, a, machine.TriggerSoleCopy, machine.ArchiveFiring{TreeGone: !gone, Verified: len(problems) == 0})
	return err
}
