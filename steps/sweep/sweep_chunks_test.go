//go:build unix

package sweep_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/sweep"
	"github.com/custody-sh/custody/store"
)

// TestSweepAcrossChunks: a fleet swept in chunks of two trees, and in
// chunks closed by their build output (one entry: each tree a chunk of its
// own), frees every idle tree's output exactly as one chunk would, keeps
// a busy tree's between them, and journals each tree's intent before its
// outcome.
func TestSweepAcrossChunks(t *testing.T) {
	for _, c := range []struct {
		name           string
		trees, entries int
		// order is the sweep's journal: each tree's intent (D) and
		// outcome (S) by its number, a chunk's intents before its
		// outcomes, chunk after chunk.
		order string
	}{
		{"two trees a chunk", 2, 1 << 20, "D0 D1 S0 S1 D3 S3 D4 S4"},
		{"one entry a chunk", 64, 1, "D0 S0 D1 S1 D3 S3 D4 S4"},
		{"one chunk", 0, 0, "D0 D1 D3 D4 S0 S1 S3 S4"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := fixtures.New(t, fixtures.Options{})
			e := sweepEnv(t, r, 2*time.Hour)
			ctx := context.Background()
			var all []steps.NewResult
			for i := range 5 {
				tr := newTree(t, e, fmt.Sprintf("t%d", i))
				cargoTarget(t, r, tr.Path, 100+i)
				all = append(all, tr)
			}
			// The third tree was written to within the hour.
			busy := all[2]
			idle := append(all[:2:2], all[3:]...)
			fresh := filepath.Join(busy.Path, "target", "debug", "x")
			soon := time.Now().Add(90 * time.Minute)
			if err := os.Chtimes(fresh, soon, soon); err != nil {
				t.Fatal(err)
			}
			res, err := sweep.Sweep(ctx, e, sweep.WithChunks(sweep.Options{Idle: time.Hour}, c.trees, c.entries))
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Trees) != 5 {
				t.Fatalf("swept %d trees; want 5", len(res.Trees))
			}
			for i, tr := range idle {
				if _, err := os.Lstat(filepath.Join(tr.Path, "target")); !os.IsNotExist(err) {
					t.Errorf("%s: target/ is still there (%v)", tr.ID, err)
				}
				var events []string
				if err := e.Store.Journal(tr.ID, func(_ []byte, en store.Entry) error {
					if en.Event != "" {
						events = append(events, en.Event)
					}
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				if len(events) != 2 || events[0] != "sweep-discard" || events[1] != "swept" {
					t.Errorf("tree %d journal: %q; want the intent, then the outcome", i, events)
				}
			}
			num := map[string]string{}
			for i, tr := range all {
				num[tr.ID] = fmt.Sprint(i)
			}
			var order []string
			if err := e.Store.Journal("", func(_ []byte, en store.Entry) error {
				switch en.Event {
				case "sweep-discard":
					order = append(order, "D"+num[en.Record])
				case "swept":
					order = append(order, "S"+num[en.Record])
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(order, " "); got != c.order {
				t.Errorf("journal: %s; want %s", got, c.order)
			}
			if _, err := os.Stat(fresh); err != nil {
				t.Errorf("the busy tree lost its build output: %v", err)
			}
			if want := int64(100 + 101 + 103 + 104 + 4*len("{}\n")); res.Bytes != want {
				t.Errorf("freed %d bytes; want %d (each idle tree's target)", res.Bytes, want)
			}
		})
	}
}
