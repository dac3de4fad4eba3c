package observe

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/safefile"
)

// maxManifest bounds how much of manifest.json is read.
const maxManifest = 64 << 20

// ObserveArchiveDir reads one archive directory without following links:
// whether it is a symlink, every entry with its size and SHA-256, and the
// manifest's bytes. It runs no pack check (CheckPack does).
func ObserveArchiveDir(dir string) machine.ArchiveDirObservation {
	obs := machine.ArchiveDirObservation{Dir: dir}
	fi, err := os.Lstat(dir)
	switch {
	case err != nil:
		obs.Err = err.Error()
		return obs
	case fi.Mode()&fs.ModeSymlink != 0:
		obs.Symlink = true
		return obs
	case !fi.IsDir():
		obs.Err = "not a directory"
		return obs
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		obs.Err = err.Error()
		return obs
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		en := machine.ArchiveEntry{Name: e.Name()}
		fi, err := os.Lstat(p)
		if err != nil {
			en.Err = err.Error()
			obs.Entries = append(obs.Entries, en)
			continue
		}
		en.Regular, en.Size = fi.Mode().IsRegular(), fi.Size()
		if en.Regular {
			sum, err := sha256File(p)
			if err != nil {
				en.Err = err.Error()
			}
			en.SHA256 = sum
			if e.Name() == machine.ArchiveManifestName && err == nil {
				obs.Manifest, err = readBounded(p, maxManifest)
				if err != nil {
					en.Err = err.Error()
				}
			}
		}
		obs.Entries = append(obs.Entries, en)
	}
	return obs
}

// sha256File returns the hex SHA-256 of the regular file at p, opened
// without following a link and without blocking on a fifo.
func sha256File(p string) (string, error) {
	f, err := safefile.Open(p, os.O_RDONLY, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// SHA256File is sha256File for steps: the digest a manifest records.
func SHA256File(p string) (string, error) { return sha256File(p) }

// readBounded reads at most limit bytes of the file at p, without
// following a link.
func readBounded(p string, limit int64) ([]byte, error) {
	f, err := safefile.Open(p, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit))
}
