//go:build !linux && !darwin

package sweep

import "os"

// dirFD is a directory the deletion opened: each file in it is statted
// and removed by name there.
type dirFD struct{ r *os.Root }

// openDirFD is the directory r holds.
func openDirFD(r *os.Root) (dirFD, error) { return dirFD{r: r}, nil }

// lstat is the identity of the entry name, not following a symlink.
func (d dirFD) lstat(name string) (identity, error) {
	fi, err := d.r.Lstat(name)
	if err != nil {
		return identity{}, err
	}
	return identityOf(fi), nil
}

// unlink removes the entry name.
func (d dirFD) unlink(name string) error { return d.r.Remove(name) }

// names lists the directory's names, without a stat of any.
func (d dirFD) names() ([]string, error) {
	f, err := d.r.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// close does nothing: the Root is closed by its owner.
func (d dirFD) close() {}
