//go:build !unix

package beneath

import (
	"errors"
	"io/fs"
	"os"
	"strings"
)

// Root is a directory opened once, below which its methods write. Off
// unix it is an os.Root (which never resolves a name out of the root)
// with every component lstat'ed first, so a link on the way is ErrLink.
type Root struct {
	path string
	root *os.Root
	// Parents is the mode a write gives a missing directory it makes on
	// the way to a name; 0700 unless set.
	Parents fs.FileMode
}

// Open opens dir, which must be a directory and not a symbolic link.
func Open(dir string) (*Root, error) {
	fi, err := os.Lstat(dir)
	if err == nil && (fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir()) {
		err = ErrLink
	}
	if err != nil {
		return nil, &Error{Op: "open", Root: dir, Name: ".", Err: err}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, &Error{Op: "open", Root: dir, Name: ".", Err: err}
	}
	return &Root{path: dir, root: root, Parents: 0o700}, nil
}

// Path is the directory the root was opened at.
func (r *Root) Path() string { return r.path }

// Close closes the root.
func (r *Root) Close() error { return r.root.Close() }

func (r *Root) fail(op, name string, err error) error {
	return &Error{Op: op, Root: r.path, Name: name, Err: err}
}

// walk checks each directory above name (and name itself when whole) is
// a real directory, making missing ones with perm when create.
func (r *Root) walk(name string, whole, create bool, perm fs.FileMode) error {
	comps, err := split(name)
	if err != nil {
		return err
	}
	if !whole {
		comps = comps[:len(comps)-1]
	}
	for i := range comps {
		p := strings.Join(comps[:i+1], "/")
		fi, err := r.root.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) && create {
			if err = r.root.Mkdir(p, perm); err == nil {
				continue
			}
		}
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir() {
			return ErrLink
		}
	}
	return nil
}

// Mkdir makes the new directory name with perm; its parent must exist,
// and name must not.
func (r *Root) Mkdir(name string, perm fs.FileMode) error {
	err := r.walk(name, false, false, 0)
	if err == nil {
		err = r.root.Mkdir(name, perm)
	}
	if err != nil {
		return r.fail("mkdir", name, err)
	}
	return nil
}

// MkdirAll makes the directory name and any missing directory above it.
func (r *Root) MkdirAll(name string, perm fs.FileMode) error {
	if err := r.walk(name, true, true, perm); err != nil {
		return r.fail("mkdir", name, err)
	}
	return nil
}

// Create makes the new regular file name with mode and returns it open
// for writing.
func (r *Root) Create(name string, mode fs.FileMode) (*os.File, error) {
	if err := r.walk(name, false, true, r.Parents); err != nil {
		return nil, r.fail("create", name, err)
	}
	f, err := r.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode.Perm())
	if err != nil {
		return nil, r.fail("create", name, err)
	}
	return f, nil
}

// WriteFile makes the new regular file name holding data, with mode.
func (r *Root) WriteFile(name string, data []byte, mode fs.FileMode) error {
	f, err := r.Create(name, mode)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return r.fail("write", name, err)
	}
	return nil
}

// Symlink makes the symbolic link name pointing at target.
func (r *Root) Symlink(target, name string) error {
	err := r.walk(name, false, true, r.Parents)
	if err == nil {
		err = r.root.Symlink(target, name)
	}
	if err != nil {
		return r.fail("symlink", name, err)
	}
	return nil
}

// ChmodDir sets the directory name's permission bits ("." is the root)
// and returns the bits it has afterwards.
func (r *Root) ChmodDir(name string, mode fs.FileMode) (fs.FileMode, error) {
	if name != "." {
		if err := r.walk(name, true, false, 0); err != nil {
			return 0, r.fail("chmod", name, err)
		}
	}
	if err := r.root.Chmod(name, mode); err != nil {
		return 0, r.fail("chmod", name, err)
	}
	fi, err := r.root.Lstat(name)
	if err != nil {
		return 0, r.fail("stat", name, err)
	}
	return fi.Mode() & (fs.ModePerm | fs.ModeSetgid | fs.ModeSetuid | fs.ModeSticky), nil
}

// Rename moves oldname to newname, both below the root.
func (r *Root) Rename(oldname, newname string) error {
	err := r.walk(oldname, false, false, 0)
	if err == nil {
		err = r.walk(newname, false, true, r.Parents)
	}
	if err == nil {
		err = r.root.Rename(oldname, newname)
	}
	if err != nil {
		return r.fail("rename", oldname+" to "+newname, err)
	}
	return nil
}

// Sync is a no-op off unix, which has no directory fsync.
func (r *Root) Sync(name string) error { return nil }

// RemoveAll removes name and everything below it, never following a link.
func (r *Root) RemoveAll(name string) error {
	if err := r.walk(name, false, false, 0); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return r.fail("remove", name, err)
	}
	if err := r.root.RemoveAll(name); err != nil {
		return r.fail("remove", name, err)
	}
	return nil
}

// Clear removes everything below the root, which stays.
func (r *Root) Clear() error {
	ents, err := os.ReadDir(r.path)
	if err != nil {
		return r.fail("remove", ".", err)
	}
	for _, e := range ents {
		if err := r.RemoveAll(e.Name()); err != nil {
			return err
		}
	}
	return nil
}
