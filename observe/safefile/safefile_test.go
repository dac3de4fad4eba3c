//go:build unix

package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadRefuses: a symlink (to a secret, to /dev/zero), a FIFO, a
// directory and a file over the limit are refused, and no error carries
// the content behind the path.
func TestReadRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("hunter2-SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	mk := func(name string, f func(p string) error) string {
		p := filepath.Join(dir, name)
		if err := f(p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := map[string]struct {
		path string
		want error
	}{
		"symlink to a secret":  {mk("s", func(p string) error { return os.Symlink(secret, p) }), ErrNotRegular},
		"symlink to /dev/zero": {mk("z", func(p string) error { return os.Symlink("/dev/zero", p) }), ErrNotRegular},
		"FIFO":                 {mk("f", func(p string) error { return syscall.Mkfifo(p, 0o600) }), ErrNotRegular},
		"directory":            {mk("d", func(p string) error { return os.Mkdir(p, 0o700) }), ErrNotRegular},
		"too large":            {mk("big", func(p string) error { return os.WriteFile(p, make([]byte, 65), 0o600) }), ErrTooLarge},
		"missing":              {filepath.Join(dir, "none"), fs.ErrNotExist},
	}
	for name, c := range cases {
		b, err := Read(c.path, 64)
		if !errors.Is(err, c.want) || b != nil {
			t.Errorf("%s: Read = %q, %v; want %v", name, b, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: the error carries the secret: %v", name, err)
		}
	}
	if b, err := Read(secret, 64); err != nil || string(b) != "hunter2-SECRET" {
		t.Errorf("Read of a regular file = %q, %v", b, err)
	}
}

// TestWriteNeverThroughSymlink: a symlink at the path is left as it is and
// its target unchanged; a FIFO is not opened for writing; a regular file is
// replaced.
func TestWriteNeverThroughSymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "outside")
	if err := os.WriteFile(target, []byte("keep me\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "holder")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := Write(link, []byte("pid 1\n"), 0o644); !errors.Is(err, ErrNotRegular) {
		t.Errorf("Write through a symlink = %v, want ErrNotRegular", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep me\n" {
		t.Errorf("the symlink's target was written: %q", b)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(fifo, []byte("x"), 0o644); !errors.Is(err, ErrNotRegular) {
		t.Errorf("Write to a FIFO = %v, want ErrNotRegular", err)
	}
	reg := filepath.Join(dir, "reg")
	for _, s := range []string{"a long first line\n", "short\n"} {
		if err := Write(reg, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(reg); string(b) != s {
			t.Errorf("after Write(%q) the file holds %q", s, b)
		}
	}
}

// TestReadFollowing: a symlink to a regular file is read through (a
// person's own info/exclude); a symlink to /dev/zero or a FIFO is refused
// at once; an oversized target is refused.
func TestReadFollowing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	own := filepath.Join(dir, "my-excludes")
	if err := os.WriteFile(own, []byte("*.log\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, 65), 0o600); err != nil {
		t.Fatal(err)
	}
	link := func(name, target string) string {
		p := filepath.Join(dir, name)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if b, err := ReadFollowing(link("exclude", own), 64); err != nil || string(b) != "*.log\n" {
		t.Errorf("ReadFollowing through a symlink to a regular file = %q, %v", b, err)
	}
	for name, c := range map[string]struct {
		path string
		want error
	}{
		"to /dev/zero": {link("z", "/dev/zero"), ErrNotRegular},
		"to a FIFO":    {link("f", fifo), ErrNotRegular},
		"FIFO":         {fifo, ErrNotRegular},
		"too large":    {link("b", big), ErrTooLarge},
	} {
		if b, err := ReadFollowing(c.path, 64); !errors.Is(err, c.want) || b != nil {
			t.Errorf("%s: ReadFollowing = %q, %v; want %v", name, b, err, c.want)
		}
	}
}
