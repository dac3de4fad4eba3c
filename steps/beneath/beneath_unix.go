//go:build unix

package beneath

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// Root is a directory opened once, below which its methods write.
type Root struct {
	path string
	fd   int
	// Parents is the mode a write gives a missing directory it makes on
	// the way to a name (the umask applies); 0700 unless set.
	Parents fs.FileMode
	// names and fds are the directories of the last parent resolved:
	// names[i] is open as fds[i], below fds[i-1] (the root for i == 0).
	names []string
	fds   []int
}

// Open opens dir, which must be a directory and not a symbolic link.
func Open(dir string) (*Root, error) {
	fd, err := again(func() (int, error) {
		return unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return nil, &Error{Op: "open", Root: dir, Name: ".", Err: linkErr(err)}
	}
	return &Root{path: dir, fd: fd, Parents: 0o700}, nil
}

// Path is the directory the root was opened at.
func (r *Root) Path() string { return r.path }

// Close closes the root and every directory it holds open.
func (r *Root) Close() error {
	r.drop(0)
	return unix.Close(r.fd)
}

// again runs f until it is not interrupted.
func again[T any](f func() (T, error)) (T, error) {
	for {
		v, err := f()
		if !errors.Is(err, unix.EINTR) {
			return v, err
		}
	}
}

// linkErr is ErrLink for what a no-follow open of a directory says about
// a symbolic link or a non-directory, else err.
func linkErr(err error) error {
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EMLINK) {
		return ErrLink
	}
	return err
}

// openDir opens the directory name of at without following a link.
func openDir(at int, name string) (int, error) {
	fd, err := again(func() (int, error) {
		return unix.Openat(at, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	})
	return fd, linkErr(err)
}

// drop closes the held directories from n on.
func (r *Root) drop(n int) {
	for i := len(r.fds) - 1; i >= n; i-- {
		unix.Close(r.fds[i])
	}
	r.fds, r.names = r.fds[:n], r.names[:n]
}

// dir returns the open directory comps names below the root (the root
// for none), each component opened without following a link; a missing
// one is made with perm when create. The descriptor belongs to r.
func (r *Root) dir(comps []string, create bool, perm fs.FileMode) (int, error) {
	n := 0
	for n < len(comps) && n < len(r.names) && comps[n] == r.names[n] {
		n++
	}
	r.drop(n)
	for _, c := range comps[n:] {
		at := r.fd
		if len(r.fds) > 0 {
			at = r.fds[len(r.fds)-1]
		}
		fd, err := openDir(at, c)
		if errors.Is(err, unix.ENOENT) && create {
			_, err = again(func() (int, error) { return 0, unix.Mkdirat(at, c, unixMode(perm)) })
			if err == nil || errors.Is(err, unix.EEXIST) {
				fd, err = openDir(at, c)
			}
		}
		if err != nil {
			return -1, err
		}
		r.fds, r.names = append(r.fds, fd), append(r.names, c)
	}
	if len(r.fds) == 0 {
		return r.fd, nil
	}
	return r.fds[len(r.fds)-1], nil
}

// parent resolves the directory holding name (made when missing and
// create) and returns it with name's last component.
func (r *Root) parent(name string, create bool) (int, string, error) {
	comps, err := split(name)
	if err != nil {
		return -1, "", err
	}
	fd, err := r.dir(comps[:len(comps)-1], create, r.Parents)
	return fd, comps[len(comps)-1], err
}

func (r *Root) fail(op, name string, err error) error {
	return &Error{Op: op, Root: r.path, Name: name, Err: err}
}

// Mkdir makes the new directory name with perm (the umask applies); its
// parent must exist, and name must not.
func (r *Root) Mkdir(name string, perm fs.FileMode) error {
	at, base, err := r.parent(name, false)
	if err == nil {
		_, err = again(func() (int, error) { return 0, unix.Mkdirat(at, base, unixMode(perm)) })
	}
	if err != nil {
		return r.fail("mkdir", name, err)
	}
	return nil
}

// MkdirAll makes the directory name and any missing directory above it,
// each with perm (the umask applies). An existing component must be a
// directory, not a link to one.
func (r *Root) MkdirAll(name string, perm fs.FileMode) error {
	comps, err := split(name)
	if err == nil {
		_, err = r.dir(comps, true, perm)
	}
	if err != nil {
		return r.fail("mkdir", name, err)
	}
	return nil
}

// Create makes the new regular file name (it must not exist, as anything)
// with exactly mode, whatever the umask, and returns it open for writing.
// Missing directories above it are made with r.Parents.
func (r *Root) Create(name string, mode fs.FileMode) (*os.File, error) {
	at, base, err := r.parent(name, true)
	if err != nil {
		return nil, r.fail("create", name, err)
	}
	fd, err := again(func() (int, error) {
		return unix.Openat(at, base, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	})
	if err != nil {
		return nil, r.fail("create", name, err)
	}
	if _, err := again(func() (int, error) { return 0, unix.Fchmod(fd, unixMode(mode)) }); err != nil {
		unix.Close(fd)
		return nil, r.fail("chmod", name, err)
	}
	return os.NewFile(uintptr(fd), r.path+"/"+name), nil
}

// WriteFile makes the new regular file name holding data, with exactly
// mode (see Create).
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

// Symlink makes the symbolic link name pointing at target. The target is
// stored, never followed.
func (r *Root) Symlink(target, name string) error {
	at, base, err := r.parent(name, true)
	if err == nil {
		_, err = again(func() (int, error) { return 0, unix.Symlinkat(target, at, base) })
	}
	if err != nil {
		return r.fail("symlink", name, err)
	}
	return nil
}

// ChmodDir sets the directory name's mode bits (permissions, setgid,
// sticky) to exactly mode, through the directory opened without following
// a link; "." is the root itself. It returns the bits the directory has
// afterwards, which the system may have narrowed (it drops setgid for a
// group the caller is not in).
func (r *Root) ChmodDir(name string, mode fs.FileMode) (fs.FileMode, error) {
	fd := r.fd
	if name != "." {
		at, base, err := r.parent(name, false)
		if err == nil {
			fd, err = openDir(at, base)
		}
		if err != nil {
			return 0, r.fail("chmod", name, err)
		}
		defer unix.Close(fd)
	}
	if _, err := again(func() (int, error) { return 0, unix.Fchmod(fd, unixMode(mode)) }); err != nil {
		return 0, r.fail("chmod", name, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, r.fail("stat", name, err)
	}
	return FileMode(uint32(st.Mode) & 0o7777), nil
}

// Rename moves oldname to newname, both below the root, neither resolved
// through a link (missing directories above newname are made with
// r.Parents). An existing newname is replaced, as rename(2) does.
func (r *Root) Rename(oldname, newname string) error {
	comps, err := split(oldname)
	if err != nil {
		return r.fail("rename", oldname, err)
	}
	from, err := r.openChain(comps[:len(comps)-1])
	if err != nil {
		return r.fail("rename", oldname, err)
	}
	defer from.close()
	to, base, err := r.parent(newname, true)
	if err == nil {
		_, err = again(func() (int, error) { return 0, unix.Renameat(from.fd, comps[len(comps)-1], to, base) })
	}
	if err != nil {
		return r.fail("rename", oldname+" to "+newname, err)
	}
	return nil
}

// heldDir is a directory opened apart from the cache.
type heldDir struct {
	fd  int
	own bool
}

func (h heldDir) close() {
	if h.own {
		unix.Close(h.fd)
	}
}

// openChain opens comps below the root without the cache (the root
// itself for none).
func (r *Root) openChain(comps []string) (heldDir, error) {
	h := heldDir{fd: r.fd}
	for _, c := range comps {
		fd, err := openDir(h.fd, c)
		h.close()
		if err != nil {
			return heldDir{}, err
		}
		h = heldDir{fd: fd, own: true}
	}
	return h, nil
}

// Sync fsyncs the directory name ("." for the root): a rename or a new
// entry in it is durable once it returns.
func (r *Root) Sync(name string) error {
	var comps []string
	if name != "." {
		var err error
		if comps, err = split(name); err != nil {
			return r.fail("sync", name, err)
		}
	}
	h, err := r.openChain(comps)
	if err == nil {
		err = unix.Fsync(h.fd)
		h.close()
	}
	if err != nil {
		return r.fail("sync", name, err)
	}
	return nil
}

// RemoveAll removes name and, when it is a directory, everything below
// it, never following a link (a link is removed, not what it points at).
// A missing name is no error. Directories are made writable on the way,
// as they are the caller's own.
func (r *Root) RemoveAll(name string) error {
	at, base, err := r.parent(name, false)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err == nil {
		err = removeAt(at, base)
	}
	r.drop(0) // what it held may be gone
	if err != nil {
		return r.fail("remove", name, err)
	}
	return nil
}

// Clear removes everything below the root, which stays.
func (r *Root) Clear() error {
	r.drop(0)
	if err := clearDir(r.fd, false); err != nil {
		return r.fail("remove", ".", err)
	}
	return nil
}

// removeAt removes the entry name of directory at, and all below it.
func removeAt(at int, name string) error {
	err := unix.Unlinkat(at, name, 0)
	if err == nil || errors.Is(err, unix.ENOENT) {
		return nil
	}
	if !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EPERM) {
		return err
	}
	fd, err := openDir(at, name)
	if err != nil {
		if errors.Is(err, unix.EACCES) {
			// A directory restored without read permission: the
			// caller's own, so it is opened up to be removed.
			if err := unix.Fchmodat(at, name, 0o700, 0); err != nil {
				return err
			}
			fd, err = openDir(at, name)
		}
		if err != nil {
			return err
		}
	}
	err = clearDir(fd, true)
	unix.Close(fd)
	if err != nil {
		return err
	}
	err = unix.Unlinkat(at, name, unix.AT_REMOVEDIR)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	return err
}

// clearDir removes every entry of the open directory fd: it lists them
// all, removes them, and lists again until none is left. When open, the
// directory (one of the caller's own, about to go) is first made
// writable and searchable by its owner.
func clearDir(fd int, open bool) error {
	if open {
		_ = unix.Fchmod(fd, 0o700)
	}
	dup, err := unix.Dup(fd)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(dup), "")
	defer f.Close()
	for {
		if _, err := f.Seek(0, 0); err != nil {
			return err
		}
		names, err := f.Readdirnames(-1)
		if err != nil {
			return err
		}
		if len(names) == 0 {
			return nil
		}
		for _, n := range names {
			if err := removeAt(fd, n); err != nil {
				return err
			}
		}
	}
}
