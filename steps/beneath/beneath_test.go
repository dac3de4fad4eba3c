//go:build unix

package beneath_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/custody-sh/custody/steps/beneath"
)

// outsideState is every entry below dir with its mode and content: what
// "untouched" is compared against.
func outsideState(t *testing.T, dir string) map[string]string {
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
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += " " + string(b)
		}
		out[p] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// setup is a root holding the link "out" to an outside directory (with
// a file of its own), the link "self" to the root's own "real"
// directory, and the link "file" to the outside file.
func setup(t *testing.T) (*beneath.Root, string, string) {
	t.Helper()
	base := t.TempDir()
	root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(root, "real"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "keep"), []byte("keep me\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for link, to := range map[string]string{"out": outside, "self": "real", "file": filepath.Join(outside, "keep")} {
		if err := os.Symlink(to, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	r, err := beneath.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, root, outside
}

// TestNoWriteFollowsALink: every write names a path through a link (to
// outside the root, or to a directory inside it), over a link, or that is
// not a plain name; each is refused with ErrLink or ErrName, and nothing
// outside the root, nor the link's target inside it, changes.
func TestNoWriteFollowsALink(t *testing.T) {
	t.Parallel()
	writes := map[string]func(r *beneath.Root) error{
		"file below a link out":          func(r *beneath.Root) error { return r.WriteFile("out/new", []byte("x"), 0o644) },
		"file deep below a link out":     func(r *beneath.Root) error { return r.WriteFile("out/a/b/new", []byte("x"), 0o644) },
		"file below a link in":           func(r *beneath.Root) error { return r.WriteFile("self/new", []byte("x"), 0o644) },
		"file over a link to a file":     func(r *beneath.Root) error { return r.WriteFile("file", []byte("x"), 0o644) },
		"file below a link to a file":    func(r *beneath.Root) error { return r.WriteFile("file/x", []byte("x"), 0o644) },
		"directory below a link out":     func(r *beneath.Root) error { return r.MkdirAll("out/d", 0o755) },
		"directory that is a link":       func(r *beneath.Root) error { return r.MkdirAll("out", 0o755) },
		"symlink below a link out":       func(r *beneath.Root) error { return r.Symlink("/etc/passwd", "out/l") },
		"chmod of a link to a directory": func(r *beneath.Root) error { _, err := r.ChmodDir("out", 0o777); return err },
		"chmod below a link":             func(r *beneath.Root) error { _, err := r.ChmodDir("self/x", 0o777); return err },
		"rename into a link out": func(r *beneath.Root) error {
			if err := r.WriteFile("real/f", []byte("x"), 0o644); err != nil {
				return nil // the test fails: this write must work
			}
			return r.Rename("real/f", "out/f")
		},
		"rename out of a link": func(r *beneath.Root) error { return r.Rename("out/keep", "taken") },
		"remove below a link":  func(r *beneath.Root) error { return r.RemoveAll("out/keep") },
		"dot-dot":              func(r *beneath.Root) error { return r.WriteFile("../outside/new", []byte("x"), 0o644) },
		"dot-dot inside":       func(r *beneath.Root) error { return r.MkdirAll("real/../../outside/d", 0o755) },
		"absolute":             func(r *beneath.Root) error { return r.WriteFile("/tmp/x", []byte("x"), 0o644) },
		"empty component":      func(r *beneath.Root) error { return r.MkdirAll("real//d", 0o755) },
		"dot component":        func(r *beneath.Root) error { return r.MkdirAll("real/./d", 0o755) },
		"NUL":                  func(r *beneath.Root) error { return r.MkdirAll("real/a\x00b", 0o755) },
		"empty":                func(r *beneath.Root) error { return r.MkdirAll("", 0o755) },
	}
	for name, write := range writes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r, root, outside := setup(t)
			before := outsideState(t, outside)
			real := outsideState(t, filepath.Join(root, "real"))
			err := write(r)
			// A new file over a link is refused as existing: O_EXCL
			// never follows it.
			overLink := name == "file over a link to a file" && errors.Is(err, fs.ErrExist)
			if !errors.Is(err, beneath.ErrLink) && !errors.Is(err, beneath.ErrName) && !overLink {
				t.Errorf("err = %v, want ErrLink or ErrName", err)
			}
			var be *beneath.Error
			if err != nil && !errors.As(err, &be) {
				t.Errorf("err %T is not a *beneath.Error", err)
			}
			if after := outsideState(t, outside); !maps(before, after) {
				t.Errorf("the outside directory changed:\n%v\nwant\n%v", after, before)
			}
			if name != "rename into a link out" {
				if after := outsideState(t, filepath.Join(root, "real")); !maps(real, after) {
					t.Errorf("the directory behind the inner link changed:\n%v\nwant\n%v", after, real)
				}
			}
		})
	}
}

func maps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestWrites: files get exactly their mode whatever the umask, links keep
// their target unfollowed, directories take setgid and sticky, a rename
// moves, RemoveAll removes a link and not what it points at, and Clear
// empties the root.
func TestWrites(t *testing.T) {
	t.Parallel()
	r, root, outside := setup(t)
	for _, f := range []struct {
		name string
		mode fs.FileMode
	}{{"a/b/secret", 0o600}, {"a/b/run", 0o755}, {"a/plain", 0o644}, {"a/ro", 0o400}, {"c/none", 0}} {
		if err := r.WriteFile(f.name, []byte(f.name), f.mode); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Lstat(filepath.Join(root, f.name))
		if err != nil || fi.Mode() != f.mode {
			t.Errorf("%s: %v %v, want mode %v", f.name, fi.Mode(), err, f.mode)
		}
	}
	if err := r.WriteFile("a/plain", []byte("again"), 0o644); !errors.Is(err, fs.ErrExist) {
		t.Errorf("a second write of a/plain = %v, want it refused (exists)", err)
	}
	if err := r.Symlink("../../outside", "a/l"); err != nil {
		t.Fatal(err)
	}
	if got, err := os.Readlink(filepath.Join(root, "a/l")); err != nil || got != "../../outside" {
		t.Errorf("link target %q %v", got, err)
	}
	if err := r.MkdirAll("g/shared", 0o700); err != nil {
		t.Fatal(err)
	}
	for _, m := range []fs.FileMode{0o700 | fs.ModeSetgid, 0o755 | fs.ModeSticky, 0o500} {
		got, err := r.ChmodDir("g/shared", m)
		if err != nil || got != m {
			t.Errorf("ChmodDir(%v) = %v, %v", m, got, err)
		}
		if fi, err := os.Lstat(filepath.Join(root, "g/shared")); err != nil || fi.Mode()&^fs.ModeDir != m {
			t.Errorf("g/shared is %v %v, want %v", fi.Mode(), err, m)
		}
	}
	if err := r.Rename("a/b/secret", "moved/secret"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "moved/secret")); err != nil || string(b) != "a/b/secret" {
		t.Errorf("moved/secret = %q %v", b, err)
	}
	if err := r.RemoveAll("out"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(outside, "keep")); err != nil {
		t.Errorf("RemoveAll of a link removed what it points at: %v", err)
	}
	if err := r.RemoveAll("not/there"); err != nil {
		t.Errorf("RemoveAll of a missing name = %v", err)
	}
	// A directory without permissions (a restored 0500, a 0000) goes too.
	if _, err := r.ChmodDir("c", 0); err != nil {
		t.Fatal(err)
	}
	if err := r.Clear(); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(root)
	if err != nil || len(ents) != 0 {
		t.Errorf("after Clear the root holds %v %v", names(ents), err)
	}
	if _, err := os.Lstat(filepath.Join(outside, "keep")); err != nil {
		t.Errorf("Clear reached outside: %v", err)
	}
}

func names(ents []fs.DirEntry) []string {
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	slices.Sort(out)
	return out
}

// TestOpenRefusesALink: a root that is a symbolic link is not opened.
func TestOpenRefusesALink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	link := filepath.Join(dir, "link")
	if err := os.Symlink(t.TempDir(), link); err != nil {
		t.Fatal(err)
	}
	if _, err := beneath.Open(link); !errors.Is(err, beneath.ErrLink) {
		t.Errorf("Open of a link = %v, want ErrLink", err)
	}
}
