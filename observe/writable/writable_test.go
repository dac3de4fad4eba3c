package writable

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/custody-sh/custody/fixtures/unprivileged"
)

// TestCheckWritable: a directory this process may write, and one that does
// not exist yet below it, are writable; asking makes nothing.
func TestCheckWritable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	missing := filepath.Join(dir, "a", "b")
	for _, p := range []string{dir, missing} {
		if err := Check(p); err != nil {
			t.Errorf("Check(%s) = %v, want nil", p, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "a")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Check made %s (%v)", filepath.Join(dir, "a"), err)
	}
}

// TestCheckPermissions: a directory this user may not write (on a writable
// file system) is an *Error that is not ReadOnly, naming the directory.
// Root may write whatever the permission bits say, so as root there is
// nothing to refuse.
func TestCheckPermissions(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("Windows has no permission bits that forbid writing a directory")
	}
	if unprivileged.Run(t) {
		return // root is not refused by permission bits: run as nobody
	}
	dir := filepath.Join(t.TempDir(), "locked")
	if err := os.Mkdir(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(dir, 0o700) })
	var e *Error
	if err := Check(filepath.Join(dir, "state")); !errors.As(err, &e) || e.ReadOnly || e.Path != dir {
		t.Fatalf("Check below a 0500 directory = %#v, want a permission *Error naming %s", err, dir)
	}
}

// TestClassify: an *Error anywhere in the chain is itself; EROFS on a path
// is a read-only file system naming that path; a permission error on a
// writable file system is not classified (it may be a read that failed);
// other errors are not.
func TestClassify(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	own := &Error{Path: "/x", ReadOnly: true, Err: syscall.EROFS}
	if got, ok := Classify(fmt.Errorf("wrapped: %w", own)); !ok || got != own {
		t.Errorf("Classify of a wrapped *Error = %v, %v", got, ok)
	}
	rofs := fmt.Errorf("write it: %w", &fs.PathError{Op: "open", Path: p, Err: syscall.EROFS})
	got, ok := Classify(rofs)
	if !ok || !got.ReadOnly || got.Path != p || !errors.Is(got, syscall.EROFS) {
		t.Errorf("Classify of EROFS on %s = %#v, %v", p, got, ok)
	}
	link := &os.LinkError{Op: "rename", Old: p + ".tmp", New: p, Err: syscall.EROFS}
	if got, ok := Classify(link); !ok || got.Path != p {
		t.Errorf("Classify of a rename's EROFS = %#v, %v; want the path renamed to", got, ok)
	}
	if got, ok := Classify(os.NewSyscallError("write", syscall.EROFS)); !ok || !got.ReadOnly || got.Path != "" {
		t.Errorf("Classify of an EROFS on no path = %#v, %v", got, ok)
	}
	for _, err := range []error{
		os.NewSyscallError("write", syscall.EACCES),
		&fs.PathError{Op: "open", Path: p, Err: syscall.EACCES},
		&fs.PathError{Op: "open", Path: p, Err: syscall.ENOENT},
		errors.New("read-only file system"),
		nil,
	} {
		if got, ok := Classify(err); ok {
			t.Errorf("Classify(%v) = %#v, want not classified", err, got)
		}
	}
}

// TestErrorSays: the message names the path, the file system's state and
// the mount, in one clause.
func TestErrorSays(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		e    Error
		want string
	}{
		{Error{Path: "/m/repo/.git/custody", Mount: "/m", ReadOnly: true, Err: syscall.EROFS}, "/m/repo/.git/custody is on a read-only file system (mounted read-only at /m)"},
		{Error{Path: "/m", Mount: "/m", ReadOnly: true, Err: syscall.EROFS}, "/m is on a read-only file system"},
		{Error{Path: "/r", ReadOnly: true, Err: syscall.EROFS}, "/r is on a read-only file system"},
		{Error{Path: "/r", Err: syscall.EACCES}, fmt.Sprintf("/r is not writable by this user (uid %d): permission denied", os.Getuid())},
		{Error{ReadOnly: true, Err: syscall.EROFS}, "the file system refused a write (read-only file system)"},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
}
