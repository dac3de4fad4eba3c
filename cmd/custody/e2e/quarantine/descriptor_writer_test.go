package quarantine

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

// TestQuarantineDescriptorWriter: a process opens a file in the tree after
// apply's final observation (apply held right before the quarantine) and
// keeps writing through that descriptor while apply goes on, logging each
// write that succeeded. The descriptor follows the tree into quarantine;
// custody sees a process using the quarantine before it deletes anything,
// moves the tree back and refuses it in-use. Every logged write is in the
// file afterwards.
func TestQuarantineDescriptorWriter(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	clitest.IgnoreLogs(t, r)
	id, path := clitest.Removable(t, r, "held")
	_, file := clitest.PlanNow(t, r, 0)
	release, wait := clitest.Paused(t, r, "apply/before-quarantine", "apply", file, "--json")
	f, err := os.OpenFile(filepath.Join(path, "debug.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var mu sync.Mutex
	var written []string
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := 0; !stop.Load(); n++ {
			line := fmt.Sprintf("line %d\n", n)
			if _, err := f.WriteString(line); err == nil {
				mu.Lock()
				written = append(written, line)
				mu.Unlock()
			}
			time.Sleep(time.Millisecond)
		}
	}()
	release()
	res := wait()
	// Keep writing a little after apply ended, as a long-running process would.
	time.Sleep(50 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	f.Close()
	if res.Code != 0 && res.Code != 3 {
		t.Fatalf("apply: %s", res)
	}
	a := clitest.ApplyDecoded(t, res)
	o := clitest.ApplyOutcome(t, a, id)
	if o.Outcome == "removed" || o.Refusal == nil || o.Refusal.Code != "in-use" {
		t.Errorf("apply outcome %+v; want the tree kept, in-use", o)
	}
	b, err := os.ReadFile(filepath.Join(path, "debug.log"))
	if err != nil {
		t.Fatalf("debug.log after apply: %v", err)
	}
	for _, l := range written {
		if !bytes.Contains(b, []byte(l)) {
			t.Fatalf("a write that succeeded through an open descriptor is lost: %q (file holds %d bytes)", strings.TrimSpace(l), len(b))
		}
	}
	t.Logf("%d writes succeeded during apply", len(written))
}
