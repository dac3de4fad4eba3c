package steps

import (
	"context"
	"runtime"
	"sync"
)

// planWorkers is how many trees plan observes at once when its options
// name no number: one per processor Go may run on, so the in-process part
// of each observation (lstat walk, hash cache lookups, index parse, hidden
// state walk, content accounting) uses every core, and never fewer than one.
func planWorkers(asked int) int {
	if asked > 0 {
		return asked
	}
	return max(1, runtime.GOMAXPROCS(0))
}

// eachBounded calls f(i) for every i in idx on at most workers goroutines
// and returns when every call that started has returned. Once ctx is done
// no further call starts, and ctx's error is returned; f must write only
// what belongs to its own index, so nothing one call finds is lost or
// overwritten by another. f is called for the indexes in order when
// workers is 1.
func eachBounded(ctx context.Context, workers int, idx []int, f func(i int)) error {
	workers = min(max(1, workers), len(idx))
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if ctx.Err() == nil {
					f(i)
				}
			}
		}()
	}
feed:
	for _, i := range idx {
		if ctx.Err() != nil {
			break
		}
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return ctx.Err()
}
