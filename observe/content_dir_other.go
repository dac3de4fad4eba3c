//go:build !(linux && (amd64 || arm64))

package observe

import (
	"github.com/custody-sh/custody/observe/gitfiles"
	"io/fs"
	"os"
)

// readDirStat lists the directory at abs (os.ReadDir) and lstats every
// entry (infos[i], or errs[i] why not); the buffer is not used here.
func readDirStat(abs string, _ []byte) (ents []fs.DirEntry, infos []fs.FileInfo, errs []error, err error) {
	ents, err = os.ReadDir(abs)
	if err != nil {
		return nil, nil, nil, err
	}
	infos, errs = make([]fs.FileInfo, len(ents)), make([]error, len(ents))
	for i, d := range ents {
		infos[i], errs[i] = d.Info()
	}
	return ents, infos, errs, nil
}

// hashFileDirect is not used here: hashFile reads through os.
func hashFileDirect(gitfiles.ObjectFormat, string, fs.FileInfo, bool) (string, fs.FileInfo, bool, error) {
	return "", nil, false, nil
}
