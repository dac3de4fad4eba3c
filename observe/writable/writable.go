// Package writable says why custody cannot write where it must: the file
// system there is mounted read-only (EROFS, or EACCES where the mount is
// read-only), or this user may not write there. Both become one typed
// value, Error, naming the exact path and, for a read-only file system, the
// directory where it is mounted. The package never writes: it asks
// access(2) and statfs(2), and reads the mount table.
package writable

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Error is returned when custody must write Path and cannot: the file
// system holding it is mounted read-only (ReadOnly), or this user lacks
// permission to write there. Nothing is written in finding that out.
type Error struct {
	// Path is the file or directory custody had to write in: the one it
	// tried, or the nearest ancestor of it that exists.
	Path string
	// Mount is where the read-only file system holding Path is mounted,
	// when ReadOnly and the mount table says ("" otherwise).
	Mount string
	// ReadOnly reports a file system mounted read-only; false means the
	// file system is writable and this user may not write Path.
	ReadOnly bool
	// Err is the system's answer (EROFS, EACCES or EPERM).
	Err error
}

// Error says what is not writable and why, in one clause.
func (e *Error) Error() string {
	switch {
	case e.Path == "":
		return fmt.Sprintf("the file system refused a write (%v)", e.Err)
	case e.ReadOnly && e.Mount != "" && e.Mount != e.Path:
		return fmt.Sprintf("%s is on a read-only file system (mounted read-only at %s)", e.Path, e.Mount)
	case e.ReadOnly:
		return fmt.Sprintf("%s is on a read-only file system", e.Path)
	}
	return fmt.Sprintf("%s is not writable by this user (uid %d): %v", e.Path, os.Getuid(), e.Err)
}

// Unwrap returns the system's error.
func (e *Error) Unwrap() error { return e.Err }

// Check returns nil when this process may create and change files in dir
// (or, when dir does not exist yet, in its nearest existing ancestor, where
// dir would be made), and an *Error when it may not. It only asks: nothing
// is created or written. An answer it cannot get (a path that vanished) is
// nil, and the write itself will say what is wrong.
func Check(dir string) error {
	p := existing(dir)
	if p == "" {
		return nil
	}
	err := access(p)
	if err == nil {
		return nil
	}
	if e, ok := classify(p, err); ok {
		return e
	}
	return nil
}

// Classify returns err's cause as an *Error when it is that custody could
// not write: an *Error in err's chain, or an error on a path (an
// *fs.PathError or *os.LinkError) whose errno is EROFS, or EACCES or EPERM
// where the file system holding the path is mounted read-only. A
// permission error on a writable file system is not classified here: it
// may be a read that failed.
func Classify(err error) (*Error, bool) {
	if err == nil {
		return nil, false
	}
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return nil, false
	}
	path := ""
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		path = pe.Path
	case errors.As(err, &le):
		path = le.New
	}
	if path == "" {
		if errno != syscall.EROFS {
			return nil, false
		}
		return &Error{ReadOnly: true, Err: errno}, true
	}
	if errno == syscall.EACCES || errno == syscall.EPERM {
		if !readOnlyMount(existing(path)) {
			return nil, false
		}
	}
	return classify(path, errno)
}

// classify makes the *Error for a write to path that failed with err.
func classify(path string, err error) (*Error, bool) {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return nil, false
	}
	switch errno {
	case syscall.EROFS:
		return &Error{Path: path, ReadOnly: true, Mount: mountOf(existing(path)), Err: errno}, true
	case syscall.EACCES, syscall.EPERM:
		if ro := readOnlyMount(existing(path)); ro {
			return &Error{Path: path, ReadOnly: true, Mount: mountOf(existing(path)), Err: errno}, true
		}
		return &Error{Path: path, Err: errno}, true
	}
	return nil, false
}

// existing is path, or its nearest ancestor that exists ("" when none
// does, which only a relative path can give).
func existing(path string) string {
	p := filepath.Clean(path)
	for {
		if _, err := os.Lstat(p); err == nil {
			return p
		}
		up := filepath.Dir(p)
		if up == p {
			return ""
		}
		p = up
	}
}
