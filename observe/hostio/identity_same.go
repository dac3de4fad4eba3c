package hostio

import (
	"fmt"
	"os"
	"path/filepath"
)

// Identity is what names a file independently of how a path spells it:
// its device and inode. Two paths (a symlink, a bind mount, "a/../b",
// a trailing slash) name the same file exactly when their identities are
// equal.
type Identity struct {
	Dev, Ino uint64
}

// SameFile reports whether a and b name the same file by identity. An
// error (either cannot be stat'ed) means unknown: callers that guard a
// destructive step treat it as "maybe the same".
func SameFile(a, b string) (bool, error) {
	ia, err := IdentityOf(a)
	if err != nil {
		return false, err
	}
	ib, err := IdentityOf(b)
	if err != nil {
		return false, err
	}
	return ia == ib, nil
}

// Encloses reports whether outer is inner or a directory above it, by
// identity: inner's real path is walked up to the root and each ancestor
// compared with outer's device and inode, so a symlink or bind mount of
// $HOME or of the main checkout's parent is recognized whatever its path
// says. An error means unknown: treat it as "maybe encloses".
func Encloses(outer, inner string) (bool, error) {
	want, err := IdentityOf(outer)
	if err != nil {
		return false, err
	}
	real, err := filepath.EvalSymlinks(inner)
	if err != nil {
		return false, fmt.Errorf("resolve %s: %w", inner, err)
	}
	for p := real; ; p = filepath.Dir(p) {
		id, err := IdentityOf(p)
		if err != nil {
			return false, err
		}
		if id == want {
			return true, nil
		}
		if parent := filepath.Dir(p); parent == p {
			return false, nil
		}
	}
}

// HomeDir returns the identity of the user's home directory ($HOME), and
// false when there is none or it cannot be stat'ed.
func HomeDir() (Identity, bool) {
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return Identity{}, false
	}
	id, err := IdentityOf(home)
	return id, err == nil
}
