package steps

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// TestInOrder: whatever order items complete in, and from however many
// goroutines, each is passed on once, in index order, one at a time, and
// only once every item before it completed.
func TestInOrder(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 2, 7, 100} {
		var got []int
		var completed sync.Map
		emit := inOrder(n, func(i int) {
			for j := 0; j <= i; j++ {
				if _, ok := completed.Load(j); !ok {
					t.Errorf("n=%d: %d passed on before %d completed", n, i, j)
				}
			}
			got = append(got, i) // one call at a time: no lock needed
		})
		order := rand.Perm(n)
		var wg sync.WaitGroup
		for _, i := range order {
			wg.Go(func() {
				completed.Store(i, true)
				emit(i)
			})
		}
		wg.Wait()
		want := make([]int, n)
		for i := range want {
			want[i] = i
		}
		if !slices.Equal(got, want) && !(n == 0 && len(got) == 0) {
			t.Errorf("n=%d: passed on %v", n, got)
		}
	}
}
