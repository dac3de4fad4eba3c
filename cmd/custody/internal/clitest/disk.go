package clitest

// Trees holding every kind of content an archive must restore, and
// snapshots of a tree as a person sees it on disk, to compare a tree with
// its restored copy.

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/custody-sh/custody/fixtures"
)

// FillEveryKind fills the tree at wt with every kind of content an archive
// must restore byte for byte: 3 unpushed commits; an exec bit; symbolic
// links, one dangling; an empty file; a binary file; CRLF under an eol
// attribute, left untouched; unicode and leading-dash names; a tracked
// change, a staged-only file, an untracked and an ignored file; an empty
// directory; and a nested repository with a commit of its own.
func FillEveryKind(t *testing.T, r *fixtures.Repo, wt string) {
	t.Helper()
	r.WriteFile(wt, ".gitattributes", "*.txt eol=crlf\n")
	r.WriteFile(wt, ".gitignore", "*.log\n")
	r.WriteFile(wt, "lib/code.go", "package lib\n")
	r.CommitAll(wt, "one")
	r.WriteFile(wt, "run.sh", "#!/bin/sh\necho hi\n")
	if err := os.Chmod(filepath.Join(wt, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.WriteFile(wt, "crlf.txt", "line one\r\nline two\r\n")
	r.CommitAll(wt, "two")
	r.WriteFile(wt, "-leading-dash", "dash\n")
	r.WriteFile(wt, "ünïcödé/名前.md", "unicode\n")
	r.CommitAll(wt, "three")
	// Uncommitted state of every kind.
	r.WriteFile(wt, "lib/code.go", "package lib\n\nfunc Changed() {}\n")
	r.WriteFile(wt, "crlf.txt", "mixed\nendings\r\nno newline at end")
	r.WriteFile(wt, "staged.txt", "staged only\n")
	r.GitIn(wt, "add", "staged.txt")
	r.WriteFile(wt, "notes/untracked.md", "only here\n")
	r.WriteFile(wt, "build.log", "ignored content\n")
	r.WriteFile(wt, "empty", "")
	if err := os.WriteFile(filepath.Join(wt, "blob.bin"), []byte{0, 1, 2, 0xff, 0xfe, '\r', '\n', 0, 'x'}, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("run.sh", filepath.Join(wt, "link-to-run")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../nowhere/at/all", filepath.Join(wt, "lib", "dangling")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(wt, "empty-dir", "deeper"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.NestedRepo(wt, "vendor/nested")
	r.WriteFile(filepath.Join(wt, "vendor", "nested"), "dirty-in-nested.txt", "uncommitted in the nested repository\n")
}

// DiskEntry is one entry of a tree as a person sees it on disk.
type DiskEntry struct {
	Type string // "file", "link", "dir"
	Exec bool
	Data string // a file's SHA-256, a link's target
}

// SnapDisk walks dir without following links, skipping the root's .git
// (a restored tree is a new repository) but not a nested repository's.
func SnapDisk(t *testing.T, dir string) map[string]DiskEntry {
	t.Helper()
	out := map[string]DiskEntry{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "." {
			return nil
		}
		if rel == ".git" {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil // a linked worktree's .git file
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[rel] = DiskEntry{Type: "link", Data: target}
		case fi.IsDir():
			out[rel] = DiskEntry{Type: "dir"}
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			out[rel] = DiskEntry{Type: "file", Exec: fi.Mode()&0o100 != 0, Data: hex.EncodeToString(sum[:])}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
