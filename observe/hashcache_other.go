//go:build !linux

package observe

import "io/fs"

// keyOf is the cache's key of info; outside Linux there is none, so every
// file is read.
func keyOf(fs.FileInfo) (statKey, bool) { return statKey{}, false }

// stampedByKernel is false outside Linux: the cache is not used.
func stampedByKernel(string) bool { return false }
