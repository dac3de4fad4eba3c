//go:build !linux && !darwin

package observe

import (
	"io/fs"

	"github.com/custody-sh/custody/observe/gitfiles"
)

// statMatches is false where custody does not compare stat data itself:
// list asks git status of every tree there.
func statMatches(gitfiles.StatData, fs.FileInfo) bool { return false }

// statFromIndexReadable is true where custody compares stat data itself.
const statFromIndexReadable = false
