//go:build unix

package deadline

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
)

// TestInterruptApplyOfAFleet: SIGINT (Ctrl-C) arrives halfway through
// apply of a plan removing a fleet of finished, published trees (400 with
// CUSTODY_TEST_FULL, else 24; CUSTODY_INTERRUPT_TREES sets it), while the
// removal of the tree in the middle has its intent committed. apply exits
// 130 and says in one line on stderr what it finished, the one tree it
// left midway for custody resume and what it did not start; custody resume
// settles the one left midway, and applying the plan again removes the
// rest. Nothing is lost: every tree is gone only with its proof journaled,
// each of its commits on origin, no tree is left registered, and no record
// is left between states.
func TestInterruptApplyOfAFleet(t *testing.T) {
	t.Parallel()
	n, err := fixtures.Size("CUSTODY_INTERRUPT_TREES", 24, 400)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	r := fixtures.New(t, fixtures.Options{})
	clitest.MustCustody(t, r, 0, "init")
	// custody new for each tree, one after another, each at main, which
	// origin has.
	loop := fmt.Sprintf(`i=0; while [ $i -lt %d ]; do printf 'f%%03d\n' $i; i=$((i+1)); done | xargs -n 1 custody new >/dev/null`, n)
	if sh := clitest.RunBin(t, "/bin/sh", r, r.Dir, []string{clitest.PathEnv(filepath.Dir(clitest.Bin()))}, "-c", loop); sh.Code != 0 {
		t.Fatalf("making %d trees:\n%s", n, sh)
	}
	var all []string
	for _, rec := range clitest.ListRecords(t, r, false) {
		all = append(all, rec.ID)
	}
	if len(all) != n {
		t.Fatalf("custody list names %d trees, want %d", len(all), n)
	}
	clitest.MustCustody(t, r, 0, append([]string{"finish"}, all...)...)
	plan := filepath.Join(r.Root, "plan.json")
	clitest.MustCustody(t, r, 2, "plan", "-o", plan, "--detailed-exitcode")
	ids := ifRemovals(t, plan)
	if len(ids) != n {
		t.Fatalf("the plan removes %d trees, want all %d", len(ids), n)
	}
	t.Logf("%d trees made, finished and planned in %s", n, time.Since(start).Round(time.Millisecond))

	// Held once half the trees are removed, the next one's intent
	// committed: SIGINT then.
	half := n / 2
	began := time.Now()
	b, interrupt, _ := clitest.StartPausedAfter(t, r, "apply/after-intent", half, "apply", plan)
	interrupt(syscall.SIGINT)
	res := b.Wait(t)
	t.Logf("apply held after %d removals and interrupted in %s", half, time.Since(began).Round(time.Millisecond))
	if res.Code != 130 {
		t.Fatalf("apply interrupted by SIGINT: exit %d, want 130\n%s", res.Code, res)
	}
	line, ok := strings.CutSuffix(res.Stderr, "\n")
	if !ok || strings.Contains(line, "\n") {
		t.Fatalf("apply interrupted by SIGINT: stderr is not one line:\n%s", res.Stderr)
	}
	rest := ids[half+1:]
	want := fmt.Sprintf("custody apply: interrupted by SIGINT after %d of %d actions (%d removed); left midway: %s (removal worktree), which custody resume settles; not started: %s (custody apply %s does them)",
		half, n, half, ids[half], ifListed(rest), plan)
	if line != want {
		t.Errorf("apply interrupted by SIGINT: stderr\n%s\nwant\n%s", line, want)
	}
	if got := strings.Count(res.Stdout, "\nremoved ") + boolInt(strings.HasPrefix(res.Stdout, "removed ")); got != half {
		t.Errorf("apply interrupted after %d removals reports %d removed:\n%s", half, got, res.Stdout)
	}
	states := ifStates(t, r)
	for i, id := range ids {
		want := machine.StateFinished
		switch {
		case i < half:
			want = machine.StateTombstoned
		case i == half:
			want = machine.StateRemoving
		}
		if st := states[id]; st != want {
			t.Errorf("after the interrupt %s (item %d) is %s, want %s", id, i, st, want)
		}
	}

	// custody resume settles the one left midway, and only that; applying
	// the plan again removes the rest.
	resumed := clitest.MustCustody(t, r, 0, "resume")
	if resumed.Stdout != "removed "+ids[half]+"\n" {
		t.Errorf("resume after the interrupt: %q, want %s removed", resumed.Stdout, ids[half])
	}
	again := clitest.MustCustody(t, r, 0, "apply", plan, "--json")
	clitest.WantOutcomes(t, "apply again", again, ids[:half+1], "already-done")
	clitest.WantOutcomes(t, "apply again", again, rest, "removed")
	t.Logf("resumed and applied again: %s in all", time.Since(began).Round(time.Millisecond))

	// Nothing lost, nothing left between states.
	heads := map[string]string{}
	states = ifStates(t, r)
	for _, id := range ids {
		if st := states[id]; st != machine.StateTombstoned {
			t.Errorf("%s is %s after resume and apply, want tombstoned", id, st)
		}
		if _, err := os.Lstat(filepath.Join(r.Dir, ".worktrees", id)); !os.IsNotExist(err) {
			t.Errorf("%s: its tree is still there (%v)", id, err)
		}
	}
	for _, e := range ifRemovalEntries(t, r) {
		heads[e.record] = e.head
		if !e.proof {
			t.Errorf("%s was removed without a proof in its journal entry", e.record)
		}
	}
	onOrigin := map[string]bool{}
	for _, id := range ids {
		head, ok := heads[id]
		switch {
		case !ok:
			t.Errorf("%s: no journal entry of its removal", id)
		case !machine.IsFullCommit(head):
			t.Errorf("%s: its removal's proof names no commit (%q)", id, head)
		case !onOrigin[head]:
			// Fails the test unless origin has the commit.
			r.Git("--git-dir="+r.Remote, "cat-file", "-e", head+"^{commit}")
			onOrigin[head] = true
		}
	}
	if wt := r.Git("worktree", "list", "--porcelain"); strings.Count(wt, "worktree ") != 1 {
		t.Errorf("git still registers trees after all were removed:\n%s", wt)
	}
	if pending := clitest.MustCustody(t, r, 0, "resume").Stdout; pending != "nothing to resume\n" {
		t.Errorf("a second resume still settles something: %q", pending)
	}
}

// ifStates is every record's state, from one custody list --all.
func ifStates(t *testing.T, r *fixtures.Repo) map[string]machine.State {
	t.Helper()
	states := map[string]machine.State{}
	for _, rec := range clitest.ListRecords(t, r, true) {
		states[rec.ID] = rec.State
	}
	return states
}

// ifRemovals is the ids the plan file at path removes, in its order.
func ifRemovals(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var p machine.Plan
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, it := range p.Items {
		if it.Action == machine.ActionRemove {
			ids = append(ids, it.ID)
		}
	}
	return ids
}

// ifListed is how the interrupt's line lists names: the first three, then
// how many more.
func ifListed(names []string) string {
	if len(names) <= 3 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:3], ", "), len(names)-3)
}

// ifEntry is one removal in the journal: the record, the HEAD it removed
// and whether it names a proof.
type ifEntry struct {
	record, head string
	proof        bool
}

// ifRemovalEntries reads the journal's removals (removing → tombstoned).
func ifRemovalEntries(t *testing.T, r *fixtures.Repo) []ifEntry {
	t.Helper()
	out := clitest.MustCustody(t, r, 0, "journal", "export", "--format", "jsonl").Stdout
	var entries []ifEntry
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var e struct {
			Record string `json:"record"`
			From   string `json:"from"`
			To     string `json:"to"`
			Proof  *struct {
				Kind string `json:"kind"`
				Head string `json:"head"`
			} `json:"proof"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("journal line %q: %v", sc.Text(), err)
		}
		if e.To != string(machine.StateTombstoned) || e.From != string(machine.StateRemoving) {
			continue
		}
		e2 := ifEntry{record: e.Record, proof: e.Proof != nil && e.Proof.Kind != ""}
		if e.Proof != nil {
			e2.head = e.Proof.Head
		}
		entries = append(entries, e2)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return entries
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
