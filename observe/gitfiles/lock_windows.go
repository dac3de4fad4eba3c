package gitfiles

import (
	"github.com/custody-sh/custody/observe/hostio"
	"os"
)

// tryLock cannot lock on windows: an UnsupportedError, so no command that
// needs the registry lock acts there.
func tryLock(*os.File, bool) error { return hostio.Unsupported("file locks") }

// unlockFile has nothing to release on windows.
func unlockFile(*os.File) {}
