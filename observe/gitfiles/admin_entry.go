package gitfiles

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/custody-sh/custody/machine"
)

// adminEntryLimit bounds how many members one admin entry may have before
// custody stops listing it: a larger one is unknown, and keeps the tree.
const adminEntryLimit = 100_000

// ReadAdminEntry lists every member of a tree's own admin entry at admin
// (<common>/worktrees/<key>), without following symlinks: each top-level
// name, and every member below the directories the catalogue lists one by
// one (machine.AdminContainer: logs/, refs/, info/). Any other directory
// is one member. The list is sorted by name. A directory that cannot be
// read is an error naming it: what it holds is unknown.
func ReadAdminEntry(admin string) ([]machine.AdminFile, error) {
	var files []machine.AdminFile
	var walk func(rel string) error
	walk = func(rel string) error {
		dir := filepath.Join(admin, filepath.FromSlash(rel))
		ents, err := os.ReadDir(dir)
		if err != nil {
			return fmt.Errorf("list admin entry %s: %w", dir, err)
		}
		for _, d := range ents {
			name := d.Name()
			if rel != "" {
				name = rel + "/" + name
			}
			f := machine.AdminFile{Name: name, Type: adminType(d.Type())}
			files = append(files, f)
			if len(files) > adminEntryLimit {
				return fmt.Errorf("list admin entry %s: more than %d members", admin, adminEntryLimit)
			}
			if f.Type == machine.AdminDir && machine.AdminContainer(name) {
				if err := walk(name); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(""); err != nil {
		return nil, err
	}
	slices.SortFunc(files, func(a, b machine.AdminFile) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return files, nil
}

// adminType is what a directory entry's type bits make of an admin
// entry's member.
func adminType(m fs.FileMode) machine.AdminFileType {
	switch {
	case m.IsRegular():
		return machine.AdminRegular
	case m.IsDir():
		return machine.AdminDir
	}
	return machine.AdminOther
}
