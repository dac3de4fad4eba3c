package steps

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEachBounded: every index is called exactly once on any number of
// workers; one worker calls them in order; at most workers calls run at
// once; a cancelled context starts no call and is returned.
func TestEachBounded(t *testing.T) {
	idx := []int{4, 0, 7, 2, 9, 1, 3}
	for _, workers := range []int{-1, 0, 1, 2, 3, 100} {
		var mu sync.Mutex
		var order []int
		running, peak := 0, 0
		calls := map[int]int{}
		err := eachBounded(context.Background(), workers, idx, func(i int) {
			mu.Lock()
			running++
			peak = max(peak, running)
			calls[i]++
			order = append(order, i)
			mu.Unlock()
			mu.Lock()
			running--
			mu.Unlock()
		})
		if err != nil {
			t.Errorf("workers %d: %v", workers, err)
		}
		want := map[int]int{}
		for _, i := range idx {
			want[i] = 1
		}
		if diff := cmp.Diff(want, calls); diff != "" {
			t.Errorf("workers %d: calls per index (-want +got):\n%s", workers, diff)
		}
		if workers <= 1 {
			if diff := cmp.Diff(idx, order); diff != "" {
				t.Errorf("workers %d: order (-want +got):\n%s", workers, diff)
			}
		}
		if peak > max(1, workers) {
			t.Errorf("workers %d: %d calls ran at once", workers, peak)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	called := 0
	err := eachBounded(ctx, 2, idx, func(int) { called++ })
	if !errors.Is(err, context.Canceled) || called != 0 {
		t.Errorf("cancelled: err %v after %d calls, want context.Canceled after none", err, called)
	}

	ctx, cancel = context.WithCancel(context.Background())
	var n int
	err = eachBounded(ctx, 1, idx, func(int) {
		n++
		if n == 2 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) || n != 2 {
		t.Errorf("cancelled during the second call: err %v after %d calls, want context.Canceled after 2", err, n)
	}
}

// TestPlanWorkers: an asked number is kept; none asked is one per
// processor, at least one.
func TestPlanWorkers(t *testing.T) {
	if got := planWorkers(3); got != 3 {
		t.Errorf("planWorkers(3) = %d", got)
	}
	if got := planWorkers(0); got < 1 {
		t.Errorf("planWorkers(0) = %d, want at least 1", got)
	}
}
