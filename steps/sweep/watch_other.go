//go:build !linux

package sweep

import "os"

// watcher watches nothing on this system: every file the deletion takes
// is statted just before (see watch_linux.go).
type watcher struct{}

// newWatcher is nil: this system's sweep does not watch.
func newWatcher() *watcher { return nil }

// watch sets no watch.
func (w *watcher) watch(*os.File) int32 { return 0 }

// unchanged is false: nothing is watched.
func (w *watcher) unchanged(int32) bool { return false }

// close does nothing.
func (w *watcher) close() {}
