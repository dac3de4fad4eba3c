// Package beneath is the one writer of a restore, a strip and a
// relocation of an archive: every write resolves below one directory, the
// root, opened once, and no write follows a symbolic link on the way. A
// name is relative and slash-separated; each of its components is opened
// from the directory before it without following a link (openat with
// O_NOFOLLOW), so a link placed anywhere below the root, by an archive or
// by anyone, stops the write with ErrLink instead of leading it out. A name
// that is absolute, empty, or holds "", "." or ".." as a component, or a
// NUL, is ErrName before anything is opened.
//
// A Root is used by one goroutine at a time. It keeps the directories of
// the last name it wrote open, so writes in tree order open each
// directory once.
package beneath

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// ErrName is returned when a name is absolute, empty, or holds an empty,
// "." or ".." component or a NUL: it could not be resolved below the root
// as written.
var ErrName = errors.New("not a plain name below the root")

// ErrLink is returned when a component of a name is a symbolic link, or
// an existing component where a directory is needed is not one: the
// write would have left the path as written.
var ErrLink = errors.New("a symbolic link or not a directory on the way")

// Error is a failed write below a root: the operation, the name (relative
// to the root) and the cause, which wraps ErrName, ErrLink or the system's
// error.
type Error struct {
	Op   string
	Root string
	Name string
	Err  error
}

// Error is "OP ROOT/NAME: CAUSE".
func (e *Error) Error() string {
	return fmt.Sprintf("%s %s/%s: %v", e.Op, e.Root, e.Name, e.Err)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// split checks name and returns its components.
func split(name string) ([]string, error) {
	if name == "" || strings.HasPrefix(name, "/") || strings.ContainsRune(name, 0) {
		return nil, ErrName
	}
	parts := strings.Split(name, "/")
	for _, p := range parts {
		if p == "" || p == "." || p == ".." {
			return nil, ErrName
		}
	}
	return parts, nil
}

// unixMode is m's permission bits with its setuid, setgid and sticky
// bits in their unix places.
func unixMode(m fs.FileMode) uint32 {
	u := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		u |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		u |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		u |= 0o1000
	}
	return u
}

// FileMode is the fs.FileMode of unix permission bits u (the low twelve
// bits: permissions, setuid, setgid, sticky).
func FileMode(u uint32) fs.FileMode {
	m := fs.FileMode(u & 0o777)
	if u&0o4000 != 0 {
		m |= fs.ModeSetuid
	}
	if u&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if u&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	return m
}
