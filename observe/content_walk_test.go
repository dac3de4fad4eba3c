//go:build unix

package observe

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/gitfiles"
)

// TestWalkContentIsWalkDir: the walk lists exactly what a filepath.WalkDir
// walk with the same rules lists, in the same order, over a tree holding
// nested directories, a nested .git file and directory (listed: only the
// root's is skipped), an empty directory, symlinks to a file and to a
// directory (not followed), a FIFO, an executable, a pruned directory, a
// reported file, and a directory that cannot be read; and the same for a
// root that is a file and one that is missing.
func TestWalkContentIsWalkDir(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write := func(name, content string, mode os.FileMode) {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(".git", "gitdir: elsewhere\n", 0o644)
	write("a/b/c.txt", "c\n", 0o644)
	write("a/b/.git/HEAD", "ref: refs/heads/main\n", 0o644)
	write("a/.git", "gitdir: x\n", 0o644)
	write("bin/run", "#!/bin/sh\n", 0o755)
	write("pruned/inside.txt", "never listed\n", 0o644)
	write("reported.txt", "not read\n", 0o644)
	write("z/last.txt", "z\n", 0o644)
	write("locked/secret.txt", "s\n", 0o644)
	for _, d := range []string{"empty", "a/b/empty"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("a/b/c.txt", filepath.Join(root, "link-file")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a", filepath.Join(root, "link-dir")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(root, "locked"), 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(filepath.Join(root, "locked"), 0o755) })
	prune, reported := map[string]bool{"pruned": true}, map[string]bool{"reported.txt": true}
	for _, dir := range []string{root, filepath.Join(root, "a", "b", "c.txt"), filepath.Join(root, "missing"), root + "/"} {
		want := walkContentReference(dir, gitfiles.FormatSHA1, prune, reported, nil)
		got := walkContent(dir, gitfiles.FormatSHA1, prune, reported, nil)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("walk of %s (-WalkDir +walkContent):\n%s", dir, diff)
		}
	}
	if len(walkContent(root, gitfiles.FormatSHA1, prune, reported, nil)) < 15 {
		t.Errorf("the walk found too little: %+v", walkContent(root, gitfiles.FormatSHA1, prune, reported, nil))
	}
}

// walkContentReference is the walk as filepath.WalkDir does it.
func walkContentReference(root string, format gitfiles.ObjectFormat, prune, reported map[string]bool, hashes *treeHashes) []machine.DiskEntry {
	var out []machine.DiskEntry
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if p == root {
			if err != nil {
				out = append(out, machine.DiskEntry{Path: ".", Kind: machine.EntryDir, Err: err.Error()})
			}
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel == ".git" {
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		e := machine.DiskEntry{Path: rel}
		if err != nil {
			e.Kind, e.Err = machine.EntryOther, err.Error()
			out = append(out, e)
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			e.Kind, e.Err = machine.EntryOther, err.Error()
			out = append(out, e)
			return nil
		}
		switch m := info.Mode(); {
		case m.IsDir():
			e.Kind = machine.EntryDir
			out = append(out, e)
			if prune[rel] {
				return fs.SkipDir
			}
			return nil
		case m&fs.ModeSymlink != 0:
			e.Kind = machine.EntrySymlink
			if target, err := os.Readlink(p); err != nil {
				e.Err = err.Error()
			} else {
				e.OID = gitfiles.BlobID(format, []byte(target))
			}
		case m.IsRegular():
			e.Kind, e.Exec = machine.EntryFile, m&0o100 != 0
			if reported[rel] {
				break
			}
			if hashes != nil {
				e.OID, err = hashes.file(p, info)
			} else {
				e.OID, err = HashFile(format, p, info)
			}
			if err != nil {
				e.Err = err.Error()
			}
		default:
			e.Kind = machine.EntryOther
		}
		out = append(out, e)
		return nil
	})
	return out
}
