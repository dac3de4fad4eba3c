package quarantine

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// deleteWorkers is how many files of a quarantine are deleted at once. A
// delete waits on the disk (freeing, and on some filesystems discarding,
// the file's blocks) far longer than it works, so a few at a time finish
// the same deletions in a fraction of the wall time, with no more CPU.
const deleteWorkers = 8

// deleteHalt is why a quarantine's deletion stopped: a file that is not
// what the check saw (why, the tree moves back) or one that could not be
// deleted (err, the tree is put back and restored).
type deleteHalt struct {
	path, why string
	err       error
}

// deleteChecked deletes files on up to deleteWorkers goroutines, each
// with its own del (from worker, with what ends it once the goroutine is
// done), which verifies each file right before it deletes it and returns
// why it did not (the file is not what the check saw) or the error
// deleting it met. The first file del refuses or cannot
// delete stops every worker before its next file; what is under way
// finishes. It returns the files it deleted (sorted by their paths) and
// why it stopped (nil when every file went).
// afterFirst runs once, after the first deletion.
func deleteChecked(files []quarantinedFile, worker func() (del func(quarantinedFile) (string, error), done func()), afterFirst func()) ([]quarantinedFile, *deleteHalt) {
	var (
		mu      sync.Mutex
		deleted = make([]quarantinedFile, 0, len(files))
		halt    *deleteHalt
		stopped atomic.Bool
		next    atomic.Int64
		first   sync.Once
		wg      sync.WaitGroup
	)
	stop := func(h *deleteHalt) {
		mu.Lock()
		defer mu.Unlock()
		if halt == nil {
			halt = h
		}
		stopped.Store(true)
	}
	for range min(deleteWorkers, len(files)) {
		wg.Go(func() {
			del, done := worker()
			defer done()
			for !stopped.Load() {
				i := int(next.Add(1)) - 1
				if i >= len(files) {
					return
				}
				f := files[i]
				why, err := del(f)
				if why != "" || err != nil {
					stop(&deleteHalt{path: f.path, why: why, err: err})
					return
				}
				mu.Lock()
				deleted = append(deleted, f)
				mu.Unlock()
				first.Do(afterFirst)
			}
		})
	}
	wg.Wait()
	slices.SortFunc(deleted, func(a, b quarantinedFile) int { return strings.Compare(a.path, b.path) })
	return deleted, halt
}
