package crash

// Concurrency (issue 2): parallel `custody new` and two parallel `custody
// apply` of one plan never corrupt the store, never remove a tree twice, and
// never fail merely because another invocation holds the lock for less than
// the lock timeout.

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/cmd/custody/internal/output"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/steps"
)

// csParallel runs every args at the same instant (as far as goroutines
// allow) with the ordinary binary and returns their results in order.
func csParallel(t *testing.T, r *fixtures.Repo, runs ...[]string) []clitest.Result {
	t.Helper()
	env := r.Env()
	out := make([]clitest.Result, len(runs))
	errs := make([]error, len(runs))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, args := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			out[i], errs[i] = clitest.RunInGoroutine(clitest.Bin(), r, env, args...)
		}()
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("custody %s: %v", strings.Join(runs[i], " "), err)
		}
	}
	return out
}

func TestConcurrentNew(t *testing.T) {
	t.Parallel()
	// The race this guards against is timing dependent: a few rounds make
	// it likely to show (eight under fixtures.Full).
	rounds := 2
	if fixtures.Full() {
		rounds = 8
	}
	for round := range rounds {
		t.Run(fmt.Sprintf("round-%d", round), csConcurrentNew)
	}
}

func csConcurrentNew(t *testing.T) {
	const n = 8
	r := fixtures.New(t, fixtures.Options{})
	clitest.MustCustody(t, r, 0, "init")
	head := r.Head(r.Dir)
	var runs [][]string
	for i := range n {
		runs = append(runs, []string{"new", fmt.Sprintf("w%d", i), "--json"})
	}
	// Readers run custody list over and over meanwhile; they must not
	// fail either.
	stop := make(chan struct{})
	var readers sync.WaitGroup
	var mu sync.Mutex
	var readerFailed []string
	env := r.Env()
	for range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				res, err := clitest.RunInGoroutine(clitest.Bin(), r, env, "list", "--json")
				if err != nil || res.Code != 0 {
					mu.Lock()
					readerFailed = append(readerFailed, fmt.Sprintf("%v\n%s", err, res))
					mu.Unlock()
				}
			}
		}()
	}
	results := csParallel(t, r, runs...)
	close(stop)
	readers.Wait()
	if len(readerFailed) > 0 {
		t.Errorf("custody list failed %d times alongside %d parallel custody new; the first:\n%s", len(readerFailed), n, readerFailed[0])
	}
	ids := map[string]bool{}
	paths := map[string]bool{}
	for i, res := range results {
		if res.Code != 0 {
			t.Errorf("custody %s alongside %d parallel custody new: want exit 0, got\n%s", strings.Join(runs[i], " "), n, res)
			continue
		}
		made := clitest.DecodeResult[steps.NewResult](t, res, "new")
		if !strings.HasPrefix(made.ID, fmt.Sprintf("w%d-", i)) || made.Head != head || made.Branch != "custody/"+made.ID {
			t.Errorf("custody new w%d made %+v", i, made)
		}
		ids[made.ID], paths[made.Path] = true, true
	}
	if t.Failed() {
		t.FailNow()
	}
	if len(ids) != n || len(paths) != n {
		t.Fatalf("want %d distinct ids and paths, got %d ids, %d paths", n, len(ids), len(paths))
	}

	active := clitest.DecodeResult[struct {
		Records []output.ListEntry `json:"records"`
	}](t, clitest.MustCustody(t, r, 0, "list", "--json"), "list").Records
	if len(active) != n {
		t.Fatalf("custody list: want %d records, got %d: %+v", n, len(active), active)
	}
	registered := clitest.Registered(t, r)
	for _, rec := range active {
		if !ids[rec.ID] || !paths[rec.Path] || rec.State != "active" || rec.Intent != nil {
			t.Errorf("list record %+v: want one of the ids made, active, without an intent", rec)
		}
		if !slices.Contains(registered, rec.Path) {
			t.Errorf("git does not register %s", rec.Path)
		}
		end := clitest.ObserveTreeEnd(t, r, rec.ID, head)
		if end.Path != "present" || end.AdminEntry != "id" || end.Marker != "id" || end.Branch != "commit" ||
			!slices.Equal(end.Triggers, []string{"create", "created"}) {
			t.Errorf("tree %s is not complete: %+v", rec.ID, end)
		}
	}
	if len(registered) != n+1 {
		t.Errorf("git registers %d worktrees, want %d plus the main checkout: %v", len(registered), n, registered)
	}
	entries := clitest.Healthy(t, r)
	if len(entries) != 2*n {
		t.Errorf("journal has %d entries, want %d (create and created per tree)", len(entries), 2*n)
	}
}

func TestConcurrentApply(t *testing.T) {
	t.Parallel()
	const n = 6
	r := fixtures.New(t, fixtures.Options{})
	clitest.MustCustody(t, r, 0, "init")
	var ids, paths []string
	from := r.Head(r.Dir)
	for i := range n {
		res := clitest.MustCustody(t, r, 0, "new", fmt.Sprintf("m%d", i), "--from", from, "--json")
		made := clitest.DecodeResult[steps.NewResult](t, res, "new")
		from = r.Commit(made.Path, fmt.Sprintf("f%d.txt", i), "published\n")
		r.Push(made.Path, "main")
		ids, paths = append(ids, made.ID), append(paths, made.Path)
	}
	clitest.MustCustody(t, r, 0, append([]string{"finish"}, ids...)...)
	plan := filepath.Join(r.Root, "plan.json")
	clitest.MustCustody(t, r, 2, "plan", "-o", plan, "--detailed-exitcode")

	results := csParallel(t, r, []string{"apply", plan, "--json"}, []string{"apply", plan, "--json"})
	removed := map[string]int{}
	for k, res := range results {
		if res.Code != 0 {
			t.Errorf("apply #%d: want exit 0, got\n%s", k, res)
			if res.Code != 3 {
				continue
			}
		}
		ap := clitest.DecodeResult[steps.ApplyResult](t, res, "apply")
		t.Logf("apply #%d: %v", k, clitest.Outcomes(ap))
		got := clitest.Outcomes(ap)
		if len(ap.Items) != n || len(got) != n {
			t.Errorf("apply #%d reported %d items for %d distinct ids, want %d: %+v", k, len(ap.Items), len(got), n, ap.Items)
		}
		for _, id := range ids {
			switch got[id] {
			case "removed":
				removed[id]++
			case "already-done":
			default:
				t.Errorf("apply #%d: %s is %q, want removed or already-done: %+v", k, id, got[id], ap.Items)
			}
		}
	}
	for _, id := range ids {
		if removed[id] != 1 {
			t.Errorf("%s was reported removed by %d applies, want exactly 1", id, removed[id])
		}
	}
	for i, id := range ids {
		end := clitest.ObserveTreeEnd(t, r, id, r.Head(r.Dir))
		if _, err := os.Lstat(paths[i]); !os.IsNotExist(err) {
			t.Errorf("%s: lstat %s = %v, want ENOENT", id, paths[i], err)
		}
		if end.State != "tombstoned" || end.Intent || end.Registered || end.AdminEntry != "absent" ||
			end.Branch != "absent" || end.EvidenceOutcome != "removed" {
			t.Errorf("%s was not removed cleanly: %+v", id, end)
		}
	}
	entries := clitest.Healthy(t, r)
	removedEntries := map[string]int{}
	for _, e := range entries {
		if e.Trigger == "removed" {
			removedEntries[e.Record]++
		}
		if e.Trigger == "retreat" {
			t.Errorf("journal entry %d: %s retreated (%s)", e.Seq, e.Record, e.Outcome)
		}
	}
	for _, id := range ids {
		if removedEntries[id] != 1 {
			t.Errorf("the journal holds %d removed entries for %s, want exactly 1", removedEntries[id], id)
		}
	}
	// A third apply finds everything done.
	ap := clitest.DecodeResult[steps.ApplyResult](t, clitest.MustCustody(t, r, 0, "apply", plan, "--json"), "apply")
	for _, it := range ap.Items {
		if it.Outcome != "already-done" {
			t.Errorf("third apply: %s is %s, want already-done", it.ID, it.Outcome)
		}
	}
}

func csDigest(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", sha256.Sum256(b))
}

func TestLockWait(t *testing.T) {
	t.Parallel()
	const hold = 1500 * time.Millisecond
	r := fixtures.New(t, fixtures.Options{})
	clitest.MustCustody(t, r, 0, "init")
	id, _ := clitest.NewTree(t, r, "held")
	state := filepath.Join(r.Dir, ".git", "custody", "state.db")
	if _, err := os.Stat(state); err != nil {
		t.Fatalf("no state file where DESIGN §3 puts it: %v", err)
	}

	t.Run("waits", func(t *testing.T) {
		release := clitest.HoldLock(t, state)
		held := time.Now()
		done := make(chan struct{})
		go func() {
			defer close(done)
			time.Sleep(hold)
			release()
		}()
		res := clitest.Custody(t, r, "list", "--json") // default --lock-timeout 10s
		waited := time.Since(held)
		<-done
		if res.Code != 0 {
			t.Fatalf("list while another process held the lock for %s: want exit 0 after waiting, got\n%s", hold, res)
		}
		if waited < hold-100*time.Millisecond {
			t.Errorf("list returned after %s, before the lock was released at %s: it did not wait", waited, hold)
		}
		recs := clitest.DecodeResult[struct {
			Records []output.ListEntry `json:"records"`
		}](t, res, "list").Records
		if len(recs) != 1 || recs[0].ID != id {
			t.Errorf("list after waiting: want %s, got %+v", id, recs)
		}
	})

	t.Run("mutating-waits", func(t *testing.T) {
		release := clitest.HoldLock(t, state)
		done := make(chan struct{})
		go func() {
			defer close(done)
			time.Sleep(hold)
			release()
		}()
		res := clitest.Custody(t, r, "new", "after-wait", "--json")
		<-done
		if res.Code != 0 {
			t.Fatalf("new while another process held the lock for %s: want exit 0 after waiting, got\n%s", hold, res)
		}
	})

	t.Run("times-out", func(t *testing.T) {
		before := csDigest(t, state)
		refs := r.Refs()
		registered := clitest.Registered(t, r)
		entries, err := os.ReadDir(filepath.Join(r.Dir, ".worktrees"))
		if err != nil {
			t.Fatal(err)
		}
		release := clitest.HoldLock(t, state)
		for _, args := range [][]string{
			{"list", "--json", "--lock-timeout", "200ms"},
			{"new", "blocked", "--json", "--lock-timeout", "200ms"},
		} {
			start := time.Now()
			res := clitest.Custody(t, r, args...)
			took := time.Since(start)
			if res.Code != 1 || res.Stdout != "" {
				t.Errorf("custody %s while the lock is held: want exit 1 and nothing on stdout, got\n%s", strings.Join(args, " "), res)
				continue
			}
			body := clitest.DecodeError(t, res)
			if body.Code != "lock-timeout" || !strings.Contains(body.Message, state) {
				t.Errorf("custody %s: want code lock-timeout and a message naming %s, got %+v", strings.Join(args, " "), state, body)
			}
			// bbolt polls the lock every 50ms and gives up one poll early.
			if took < 100*time.Millisecond || took > 5*time.Second {
				t.Errorf("custody %s gave up after %s, want about 200ms", strings.Join(args, " "), took)
			}
		}
		release()
		if after := csDigest(t, state); after != before {
			t.Errorf("the state file changed although every command timed out")
		}
		if got := r.Refs(); got != refs {
			t.Errorf("refs changed:\nbefore:\n%s\nafter:\n%s", refs, got)
		}
		if got := clitest.Registered(t, r); !slices.Equal(got, registered) {
			t.Errorf("git registrations changed: %v → %v", registered, got)
		}
		if got, _ := os.ReadDir(filepath.Join(r.Dir, ".worktrees")); len(got) != len(entries) {
			t.Errorf("the managed root changed: %d → %d entries", len(entries), len(got))
		}
	})
	clitest.Healthy(t, r)
}

// TestConcurrentApplyNeverStale pauses one apply of a plan at each step of
// its removal while a second apply of the same plan runs: neither reports
// stale for a tree the other removed; every outcome is removed,
// already-done or a real refusal (in-progress while the other holds the
// intent).
func TestConcurrentApplyNeverStale(t *testing.T) {
	t.Parallel()
	t.Run("observer-paused-while-the-other-removes", func(t *testing.T) {
		t.Parallel()
		r, ids, plan := clitest.PausedPlan(t, 2)
		// B has read each record (finished, no intent) and is about to
		// observe it; A removes everything meanwhile.
		release, wait := clitest.Paused(t, r, "apply/before-observe", "apply", plan, "--json")
		a := clitest.MustCustody(t, r, 0, "apply", plan, "--json")
		clitest.WantOutcomes(t, "apply A", a, ids, "removed")
		release()
		b := wait()
		if b.Code != 0 {
			t.Errorf("apply B: want exit 0, got\n%s", b)
		}
		clitest.WantOutcomes(t, "apply B", b, ids, "already-done")
	})
	for _, point := range []string{"apply/after-intent", "apply/after-remove"} {
		t.Run("remover-paused-at-"+strings.ReplaceAll(point, "/", "-"), func(t *testing.T) {
			t.Parallel()
			r, ids, plan := clitest.PausedPlan(t, 1)
			release, wait := clitest.Paused(t, r, point, "apply", plan, "--json")
			// B waits for A's live intent, then reports it in progress:
			// a real refusal, never stale.
			b := clitest.Custody(t, r, "apply", plan, "--json", "--lock-timeout", "300ms")
			if b.Code != 3 {
				t.Errorf("apply B while A holds the intent: want exit 3, got\n%s", b)
			}
			ap := clitest.DecodeResult[steps.ApplyResult](t, b, "apply")
			if len(ap.Items) != 1 || ap.Items[0].Refusal == nil || ap.Items[0].Refusal.Code != "in-progress" {
				t.Errorf("apply B while A holds the intent: want one in-progress refusal, got\n%s", b)
			}
			// C waits long enough for A to finish: already-done.
			cDone := make(chan clitest.Result)
			go func() {
				res, err := clitest.RunInGoroutine(clitest.Bin(), r, r.Env(), "apply", plan, "--json", "--lock-timeout", "30s")
				if err != nil {
					t.Error(err)
				}
				cDone <- res
			}()
			time.Sleep(200 * time.Millisecond)
			release()
			a := wait()
			if a.Code != 0 {
				t.Errorf("apply A: want exit 0, got\n%s", a)
			}
			clitest.WantOutcomes(t, "apply A", a, ids, "removed")
			c := <-cDone
			if c.Code != 0 {
				t.Errorf("apply C: want exit 0, got\n%s", c)
			}
			clitest.WantOutcomes(t, "apply C", c, ids, "already-done")
		})
	}
}
