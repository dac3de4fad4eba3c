package steps

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

// deleteChecked deletes files on up to deleteWorkers goroutines with del,
// which verifies each right before it deletes it (on the goroutine that
// deletes it) and returns why it did not (the file is not what the check
// saw) or the error deleting it met. The first file del refuses or cannot
// delete stops every worker before its next file; what is under way
// finishes. It returns the files it deleted (sorted by their paths) and
// why it stopped (nil when every file went).
// afterFirst runs once, after the first deletion.
func deleteChecked(files []quarantinedFile, del func(quarantinedFile) (string, error), afterFirst func()) ([]quarantinedFile, *deleteHalt) {
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
