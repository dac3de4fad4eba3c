package steps

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrNotRegularFile is returned when a file custody is asked to write
// already exists and is not a regular file: a symlink (even one to a regular
// file), a directory, a FIFO, a device such as /dev/null, or a socket.
// Nothing is written and the existing entry is left exactly as it was. The
// error wrapping it names the path and what it is.
var ErrNotRegularFile = errors.New("not a regular file")

// Every file custody writes goes through WriteFile or CreateFile, which keep
// these rules, in this order:
//
//  1. An existing target that is not a regular file is refused
//     (ErrNotRegularFile) before anything is created.
//  2. The content goes to a new temporary file created with O_EXCL under a
//     random name in the target's own directory (so the rename below never
//     crosses a filesystem), with exactly the requested mode.
//  3. The temporary file is fsynced and closed, the target is checked again
//     (rule 1), and the temporary file is renamed over the target.
//  4. The directory is fsynced, so the rename itself survives a crash.
//
// A reader therefore sees the old content or the whole new content, never a
// part, and a kill at any instant leaves at worst a stray temporary file
// named .<target>.custody-<random>.tmp (one leading dot) beside the target,
// never a damaged target. The check before the rename narrows, but cannot
// close, the window in which another process puts something else at the
// target; rename never follows a symlink and cannot replace a directory, so
// such a race can at worst replace the entry made in that window (a link
// itself, a FIFO, socket or device node), never what a link points at or a
// directory. A replaced file does not keep its old mode.

// WriteFile writes data to path durably and atomically, replacing a regular
// file that is there. The file gets exactly perm (the umask does not apply:
// a replaced file's mode must not depend on the caller's umask). When
// WriteFile returns an error before the rename, path is untouched and no
// temporary file is left; an error after it (syncing the directory) says so.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	f, err := CreateFile(path, perm)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Commit()
}

// DurableFile is a file being written durably: its bytes go to a temporary
// file beside the target, which replaces the target only on Commit. The
// caller must end every DurableFile with Commit or Abort; `defer f.Abort()`
// right after CreateFile is the intended use (Abort after Commit does
// nothing). A DurableFile is not safe for concurrent use.
type DurableFile struct {
	path string
	tmp  *os.File
	done bool
}

// CreateFile starts a durable write of path with mode perm (see WriteFile).
// It refuses, with an error wrapping ErrNotRegularFile, a path that exists
// and is not a regular file, and creates nothing then.
func CreateFile(path string, perm fs.FileMode) (*DurableFile, error) {
	if err := checkTarget(path); err != nil {
		return nil, err
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	for attempt := 0; ; attempt++ {
		var rnd [8]byte
		if _, err := rand.Read(rnd[:]); err != nil {
			return nil, fmt.Errorf("write %s: %w", path, err)
		}
		name := filepath.Join(dir, "."+strings.TrimPrefix(base, ".")+".custody-"+hex.EncodeToString(rnd[:])+".tmp")
		f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
		if errors.Is(err, fs.ErrExist) && attempt < 10 {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("write %s: %w", path, err)
		}
		d := &DurableFile{path: path, tmp: f}
		if err := f.Chmod(perm); err != nil {
			d.Abort()
			return nil, fmt.Errorf("write %s: %w", path, err)
		}
		return d, nil
	}
}

// Path is the target the file replaces on Commit.
func (d *DurableFile) Path() string { return d.path }

// Write writes to the temporary file; the target does not change.
func (d *DurableFile) Write(p []byte) (int, error) {
	if d.done {
		return 0, fmt.Errorf("write %s: already committed or aborted", d.path)
	}
	n, err := d.tmp.Write(p)
	if err != nil {
		return n, fmt.Errorf("write %s: %w", d.path, err)
	}
	return n, nil
}

// Commit fsyncs and closes the temporary file, checks the target again,
// renames the temporary file over it and fsyncs the directory. On an error
// before the rename the target is untouched and the temporary file removed.
func (d *DurableFile) Commit() error {
	if d.done {
		return fmt.Errorf("write %s: already committed or aborted", d.path)
	}
	fail := func(err error) error {
		d.Abort()
		return fmt.Errorf("write %s: %w", d.path, err)
	}
	if err := d.tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := d.tmp.Close(); err != nil {
		return fail(err)
	}
	if err := checkTarget(d.path); err != nil {
		d.Abort()
		return err
	}
	if err := os.Rename(d.tmp.Name(), d.path); err != nil {
		return fail(err)
	}
	d.done = true
	if err := SyncDir(filepath.Dir(d.path)); err != nil {
		return fmt.Errorf("%s was replaced, but its directory could not be synced, so the change may not survive a crash: %w", d.path, err)
	}
	return nil
}

// Abort discards the temporary file and leaves the target as it was. It is
// idempotent, and does nothing after Commit.
func (d *DurableFile) Abort() error {
	if d.done {
		return nil
	}
	d.done = true
	_ = d.tmp.Close() // already closed when Commit failed late
	if err := os.Remove(d.tmp.Name()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove the temporary file %s: %w", d.tmp.Name(), err)
	}
	return nil
}

// checkTarget refuses a path that exists and is not a regular file. A path
// that does not exist is fine; one that cannot be examined is an error.
func checkTarget(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("write %s: %w", path, err)
	case fi.Mode().IsRegular():
		return nil
	}
	what := DescribeMode(fi.Mode())
	if fi.Mode()&fs.ModeSymlink != 0 {
		if to, err := os.Readlink(path); err == nil {
			what += " (to " + to + ")"
		}
	}
	return fmt.Errorf("%s is %s, %w; nothing was written and it was left as it is", path, what, ErrNotRegularFile)
}

// DescribeMode names a file type with its article, as refusals of a
// target say what is there: "a symlink", "a regular file", "a FIFO
// (named pipe)".
func DescribeMode(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	case m.IsDir():
		return "a directory"
	case m.IsRegular():
		return "a regular file"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return fmt.Sprintf("a special file (mode %v)", m.Type())
}

// SyncDir fsyncs a directory, making a rename in it durable.
func SyncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
