//go:build unix

package archive_test

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/steps/archive"
)

// forged is an archive made by hand, as a hostile one would be: a commit
// whose tree is crafted with git mktree (its objects in the repository
// the manifest names, so a restore fetches them from there), no bundle,
// an empty patch, nested images and a manifest as the case writes them.
type forged struct {
	t        *testing.T
	r        *fixtures.Repo
	blobs    map[string]string
	base     string // holds outside/, the archive and the target
	outside  string
	manifest machine.ArchiveManifest
	images   map[string][]byte
}

func newForged(t *testing.T) *forged {
	t.Helper()
	r := fixtures.New(t, fixtures.Options{NoRemote: true})
	base := t.TempDir()
	if real, err := filepath.EvalSymlinks(base); err == nil {
		base = real
	}
	f := &forged{t: t, r: r, blobs: map[string]string{}, base: base, outside: filepath.Join(base, "outside"), images: map[string][]byte{}}
	if err := os.MkdirAll(filepath.Join(f.outside, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.outside, "keep"), []byte("keep me\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// blob stores data as a blob and returns its id.
func (f *forged) blob(data string) string {
	f.t.Helper()
	if id, ok := f.blobs[data]; ok {
		return id
	}
	p := filepath.Join(f.base, "blob")
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		f.t.Fatal(err)
	}
	id := strings.TrimSpace(f.r.Git("hash-object", "-w", "--", p))
	os.Remove(p)
	f.blobs[data] = id
	return id
}

// tree makes a tree object of entries "<mode> <type> <id>\t<name>"
// (mktree checks little: a name may repeat, or be ".."), and returns its
// id.
func (f *forged) tree(entries ...string) string {
	f.t.Helper()
	cmd := exec.Command("git", "mktree", "-z")
	cmd.Dir, cmd.Env = f.r.Dir, f.r.Env()
	cmd.Stdin = strings.NewReader(strings.Join(entries, "\x00") + "\x00")
	out, err := cmd.Output()
	if err != nil {
		f.t.Fatalf("mktree %q: %v", entries, err)
	}
	return strings.TrimSpace(string(out))
}

func (f *forged) file(name, data string) string { return "100644 blob " + f.blob(data) + "\t" + name }
func (f *forged) link(name, target string) string {
	return "120000 blob " + f.blob(target) + "\t" + name
}
func (f *forged) sub(name string, entries ...string) string {
	return "040000 tree " + f.tree(entries...) + "\t" + name
}

// commitTree makes a commit of tree (kept by a ref, so a restore's fetch
// from the repository brings it) and sets the manifest's HEAD to it.
func (f *forged) commitTree(tree string) {
	f.t.Helper()
	c := strings.TrimSpace(f.r.Git("commit-tree", "-m", "forged", tree))
	f.r.Git("update-ref", "refs/heads/forged", c)
	f.manifest = machine.ArchiveManifest{
		Format: machine.ArchiveFormat, ID: "forged-00000000", Repository: "r", CommonDir: filepath.Join(f.r.Dir, ".git"),
		Record: "forged", Path: filepath.Join(f.base, "was"), Head: c, Branch: "refs/heads/forged", ObjectFormat: "sha1",
		Commits: []string{}, Prerequisites: []string{}, Remotes: []machine.ArchiveRemote{}, WorktreeTree: tree, HeadTree: tree,
		Files: []machine.ArchiveFile{}, Nested: []machine.ArchiveNested{}, EmptyDirs: []string{}, BuildOutput: []machine.DiscardedDir{},
		CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
	}
}

// image adds a nested repository at root whose image holds hdrs.
func (f *forged) image(root string, hdrs ...tar.Header) {
	f.t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, h := range hdrs {
		h.Format = tar.FormatPAX
		if err := tw.WriteHeader(&h); err != nil {
			f.t.Fatal(err)
		}
		if h.Size > 0 {
			tw.Write(bytes.Repeat([]byte("x"), int(h.Size)))
		}
	}
	if err := tw.Close(); err != nil {
		f.t.Fatal(err)
	}
	name := fmt.Sprintf("nested-%d.tar", len(f.images)+1)
	f.images[name] = b.Bytes()
	f.manifest.Nested = append(f.manifest.Nested, machine.ArchiveNested{Path: root, Image: name})
}

// write writes the archive directory (manifest body as given, or m
// encoded) and returns it.
func (f *forged) write(body []byte) string {
	f.t.Helper()
	dir := filepath.Join(f.base, "archive")
	if err := os.Mkdir(dir, 0o700); err != nil {
		f.t.Fatal(err)
	}
	files := map[string][]byte{machine.ArchivePatchName: nil}
	for n, b := range f.images {
		files[n] = b
	}
	m := f.manifest
	m.Files = nil
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o600); err != nil {
			f.t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		m.Files = append(m.Files, machine.ArchiveFile{Name: n, SHA256: hex.EncodeToString(sum[:]), Size: int64(len(b))})
	}
	if body == nil {
		var err error
		if body, err = json.MarshalIndent(m, "", "  "); err != nil {
			f.t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, machine.ArchiveManifestName), body, 0o600); err != nil {
		f.t.Fatal(err)
	}
	return dir
}

// state is every entry below dir with its type, mode and content.
func state(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		v := fi.Mode().String()
		switch {
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += " " + string(b)
		case fi.Mode()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			v += " -> " + l
		}
		out[p] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameState(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func restore(t *testing.T, r *fixtures.Repo, dir, target string) (archive.ArchiveRestored, error) {
	t.Helper()
	g := hostio.NewGit(&hostio.Runner{Env: r.Env()})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return archive.RestoreArchive(ctx, g, nil, dir, target)
}

// TestRestoreRefusesHostileArchives is the hostile corpus of What must
// hold: each archive would, restored naively, write outside its target or
// write what no restore writes. Each is refused with one archive-invalid
// paragraph, the target is never left behind, and the outside directory
// (which a symbolic link of the tree points at) is untouched.
func TestRestoreRefusesHostileArchives(t *testing.T) {
	t.Parallel()
	reg := func(name string) tar.Header {
		return tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: 1}
	}
	dir := func(name string) tar.Header { return tar.Header{Name: name + "/", Typeflag: tar.TypeDir, Mode: 0o755} }
	for _, tc := range []struct {
		name  string
		forge func(f *forged) []byte // a manifest body, or nil for f.manifest
		want  string                 // in the refusal's message
	}{
		{"a tree entry below a symbolic link of the tree", func(f *forged) []byte {
			f.commitTree(f.tree(f.link("evil", f.outside), f.sub("evil", f.file("d", "planted\n"))))
			return nil
		}, `"evil/d" lies below "evil", a symbolic link`},
		{"the issue's archive: a link out, an empty directory and a nested image below it", func(f *forged) []byte {
			f.commitTree(f.tree(f.file("README", "hi\n"), f.link("evil", f.outside)))
			f.manifest.EmptyDirs = []string{"evil/d"}
			f.image("evil/n", dir(".git"), reg(".git/HEAD"))
			return nil
		}, `"evil/d" lies below "evil", a symbolic link`},
		{"a nested image below a link to a directory inside the target", func(f *forged) []byte {
			f.commitTree(f.tree(f.link("here", "."), f.file("a", "a\n")))
			f.image("here/n", reg("f"))
			return nil
		}, `"here/n" lies below "here", a symbolic link`},
		{"an empty directory below a file", func(f *forged) []byte {
			f.commitTree(f.tree(f.file("f", "x\n")))
			f.manifest.EmptyDirs = []string{"f/d"}
			return nil
		}, `"f/d" lies below "f", a file`},
		{"an image entry below a link the image made earlier", func(f *forged) []byte {
			f.commitTree(f.tree(f.file("a", "a\n")))
			f.image("n", tar.Header{Name: "l", Typeflag: tar.TypeSymlink, Linkname: "/tmp"}, reg("l/x"))
			return nil
		}, `"n/l/x" lies below "n/l", a image symbolic link`},
		{"an image entry that climbs out", func(f *forged) []byte {
			f.commitTree(f.tree(f.file("a", "a\n")))
			f.image("n", reg("../../outside/x"))
			return nil
		}, `the image of "n" names "../../outside/x", which leaves it`},
		{"an absolute image entry", func(f *forged) []byte {
			f.commitTree(f.tree(f.file("a", "a\n")))
			f.image("n", reg(filepath.Join(f.outside, "x")))
			return nil
		}, `which leaves it`},
		{"a device in an image", func(f *forged) []byte {
			f.commitTree(f.tree(f.file("a", "a\n")))
			f.image("n", tar.Header{Name: "null", Typeflag: tar.TypeChar, Mode: 0o666, Devmajor: 1, Devminor: 3})
			return nil
		}, `a character device, which no restore writes`},
		{"a FIFO and a hard link in an image", func(f *forged) []byte {
			f.commitTree(f.tree(f.file("a", "a\n")))
			f.image("n", tar.Header{Name: "p", Typeflag: tar.TypeFifo, Mode: 0o644},
				tar.Header{Name: "h", Typeflag: tar.TypeLink, Linkname: filepath.Join(f.outside, "keep")})
			return nil
		}, `a FIFO, which no restore writes`},
		{"a setuid file in an image", func(f *forged) []byte {
			f.commitTree(f.tree(f.file("a", "a\n")))
			f.image("n", tar.Header{Name: "su", Typeflag: tar.TypeReg, Mode: 0o4755, Size: 1})
			return nil
		}, `gives "su" mode 4755`},
		{"a path named twice by the tree", func(f *forged) []byte {
			f.commitTree(f.tree(f.file("twice", "one\n"), f.file("twice", "two\n")))
			return nil
		}, `"twice" is named twice`},
		{"an empty directory that is also a file of the tree", func(f *forged) []byte {
			f.commitTree(f.tree(f.file("f", "x\n")))
			f.manifest.EmptyDirs = []string{"f"}
			return nil
		}, `"f" is named twice (file and empty directory)`},
		{"a nested repository inside another", func(f *forged) []byte {
			f.commitTree(f.tree(f.file("a", "a\n")))
			f.image("n", reg("x"))
			f.image("n/inner", reg("y"))
			return nil
		}, `"n/inner" lies inside nested repository "n"`},
		{"an empty directory named twice", func(f *forged) []byte {
			f.commitTree(f.tree(f.file("a", "a\n")))
			f.manifest.EmptyDirs = []string{"d", "d"}
			return nil
		}, `"d" is named twice`},
		{"an empty directory with dot-dot", func(f *forged) []byte {
			f.commitTree(f.tree(f.file("a", "a\n")))
			f.manifest.EmptyDirs = []string{"../outside/planted"}
			return nil
		}, `empty directory "../outside/planted" leaves the tree`},
		{"an absolute nested repository", func(f *forged) []byte {
			f.commitTree(f.tree(f.file("a", "a\n")))
			f.image(filepath.Join(f.outside, "n"), reg("x"))
			return nil
		}, `its path leaves the tree`},
		{"a name with a NUL byte", func(f *forged) []byte {
			f.commitTree(f.tree(f.file("a", "a\n")))
			f.manifest.EmptyDirs = []string{"a\x00/../../outside"}
			return nil
		}, `leaves the tree`},
		{"a name with an empty component", func(f *forged) []byte {
			f.commitTree(f.tree(f.file("a", "a\n")))
			f.manifest.EmptyDirs = []string{"x//y"}
			return nil
		}, `leaves the tree`},
		{"a setuid mode", func(f *forged) []byte {
			f.commitTree(f.tree(f.file("a", "a\n")))
			f.manifest.Modes = &machine.ArchiveModes{Root: "0755", File: "0644", Executable: "0755", Directory: "0755",
				Entries: []machine.ArchiveMode{{Path: "a", Mode: "4755"}}}
			return nil
		}, `modes: "a" has mode "4755"`},
		{"an exec bit the tree does not hold", func(f *forged) []byte {
			f.commitTree(f.tree(f.file("a", "a\n")))
			f.manifest.Modes = &machine.ArchiveModes{Root: "0755", File: "0644", Executable: "0755", Directory: "0755",
				Entries: []machine.ArchiveMode{{Path: "a", Mode: "0755"}, {Path: "ghost", Mode: "0600"}}}
			return nil
		}, `modes give the file "a" mode 0755, modes name "ghost", which the tree does not hold`},
		{"a mode for a symbolic link", func(f *forged) []byte {
			f.commitTree(f.tree(f.file("a", "a\n"), f.link("l", f.outside)))
			f.manifest.Modes = &machine.ArchiveModes{Root: "0755", File: "0644", Executable: "0755", Directory: "0755",
				Entries: []machine.ArchiveMode{{Path: "l", Mode: "0777"}}}
			return nil
		}, `modes name "l", a symbolic link`},
		{"a damaged manifest", func(f *forged) []byte {
			f.commitTree(f.tree(f.file("a", "a\n")))
			b, _ := json.Marshal(f.manifest)
			return b[:len(b)/2]
		}, `not a manifest`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newForged(t)
			body := tc.forge(f)
			arch := f.write(body)
			before, outside := state(t, f.base), state(t, f.outside)
			delete(before, filepath.Join(f.base, "target"))
			target := filepath.Join(f.base, "target")
			_, err := restore(t, f.r, arch, target)
			var r *machine.Refusal
			if !errors.As(err, &r) || r.Code != machine.CodeArchiveInvalid {
				t.Fatalf("restore = %v, want an archive-invalid refusal", err)
			}
			if !strings.Contains(r.Message, tc.want) || strings.Contains(r.Message, "\n") {
				t.Errorf("refusal %q, want one paragraph containing %q", r.Message, tc.want)
			}
			if got := state(t, f.outside); !sameState(got, outside) {
				t.Errorf("the outside directory changed:\n%v\nwant\n%v", got, outside)
			}
			if _, err := os.Lstat(target); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the target was left behind: %v", err)
			}
			if got := state(t, f.base); !sameState(got, before) {
				t.Errorf("something was written beside the target:\n%v\nwant\n%v", got, before)
			}
		})
	}
}

// TestRestoreIntoEmptyDirLeavesItEmpty: a refused restore into an empty
// directory a person made leaves it there, empty, with its mode.
func TestRestoreIntoEmptyDirLeavesItEmpty(t *testing.T) {
	t.Parallel()
	f := newForged(t)
	f.commitTree(f.tree(f.file("README", "hi\n"), f.link("evil", f.outside), f.sub("evil", f.file("d", "planted\n"))))
	arch := f.write(nil)
	target := filepath.Join(f.base, "mine")
	if err := os.Mkdir(target, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(target, 0o750); err != nil {
		t.Fatal(err)
	}
	outside := state(t, f.outside)
	if _, err := restore(t, f.r, arch, target); err == nil {
		t.Fatal("a hostile archive was restored")
	}
	fi, err := os.Lstat(target)
	ents, _ := os.ReadDir(target)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o750 || len(ents) != 0 {
		t.Errorf("the person's empty directory: %v %v, %d entries; want it empty, 0750", fi, err, len(ents))
	}
	if got := state(t, f.outside); !sameState(got, outside) {
		t.Errorf("the outside directory changed")
	}
}

// TestRestoreOddNames: names with a newline, a byte that is not UTF-8,
// a backslash and dots, and a link pointing out, restore inside the
// target exactly (the link is made, never followed).
func TestRestoreOddNames(t *testing.T) {
	t.Parallel()
	f := newForged(t)
	names := []string{"new\nline", "not-utf8-\xff\xfe", `..\..\outside\x`, "...", ".hidden", "-dash", " space "}
	var ents []string
	for _, n := range names {
		ents = append(ents, f.file(n, n))
	}
	ents = append(ents, f.link("out", f.outside), f.sub("d", f.file("..x", "y")))
	f.commitTree(f.tree(ents...))
	arch := f.write(nil)
	target := filepath.Join(f.base, "target")
	outside := state(t, f.outside)
	res, err := restore(t, f.r, arch, target)
	if err != nil {
		t.Fatal(err)
	}
	if res.Files != len(names)+2 || res.Modes != archive.ModesNotRecorded {
		t.Errorf("restore = %+v, want %d files and modes not recorded", res, len(names)+2)
	}
	for _, n := range names {
		if b, err := os.ReadFile(filepath.Join(target, n)); err != nil || string(b) != n {
			t.Errorf("%q = %q %v", n, b, err)
		}
	}
	if l, err := os.Readlink(filepath.Join(target, "out")); err != nil || l != f.outside {
		t.Errorf("out -> %q %v", l, err)
	}
	if got := state(t, f.outside); !sameState(got, outside) {
		t.Errorf("the outside directory changed")
	}
}
