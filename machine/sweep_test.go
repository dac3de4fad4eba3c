package machine_test

import (
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
)

func TestDecideSweep(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	idle := 24 * time.Hour
	target := machine.DiscardedDir{Path: "target", Kind: machine.BuildCargoTarget, Bytes: 4096}
	base := func() machine.SweepFacts {
		return machine.SweepFacts{
			Record:    machine.Record{ID: "a-1", Kind: machine.KindWorktree, State: machine.StateActive, Path: "/r/.worktrees/a-1"},
			PathState: machine.PathPresent, Newest: now.Add(-48 * time.Hour), NewestPath: "src/main.rs",
			Observed: true, Build: []machine.DiscardedDir{target},
		}
	}
	unpushed := &machine.PlanItem{Action: machine.ActionKeep, Refusals: []machine.Refusal{{Code: machine.CodeUnpushedCommits, Message: "x is on no ref"}}}
	inUse := &machine.PlanItem{Action: machine.ActionKeep, Refusals: []machine.Refusal{{Code: machine.CodeUnpushedCommits, Message: "x"}, {Code: machine.CodeInUse, Message: "pid 7"}}}
	proven := &machine.PlanItem{Action: machine.ActionRemove, Proof: &machine.Proof{Kind: machine.ProofAncestry, Remote: "origin"}}
	with := func(f func(*machine.SweepFacts)) machine.SweepFacts { s := base(); f(&s); return s }
	for _, c := range []struct {
		name  string
		facts machine.SweepFacts
		max   int64
		want  machine.SweepTree
	}{
		{"idle active tree: its build output goes, no archive", base(), 0,
			machine.SweepTree{ID: "a-1", Path: "/r/.worktrees/a-1", State: machine.StateActive, Idle: true, Discard: []machine.DiscardedDir{target}}},
		{"a live lease keeps it", with(func(f *machine.SweepFacts) {
			f.Lease = &machine.Lease{Holder: "s1", Expires: now.Add(time.Minute)}
		}), 0, machine.SweepTree{ID: "a-1", Path: "/r/.worktrees/a-1", State: machine.StateActive, Discard: []machine.DiscardedDir{},
			Why: "leased by s1 until 2026-12-02T12:01:00Z"}},
		{"a recent change keeps it", with(func(f *machine.SweepFacts) { f.Newest = now.Add(-3 * time.Hour) }), 0,
			machine.SweepTree{ID: "a-1", Path: "/r/.worktrees/a-1", State: machine.StateActive, Discard: []machine.DiscardedDir{},
				Why: "src/main.rs changed 3h0m0s ago (idle means nothing changed for 24h0m0s)"}},
		{"a process keeps it", with(func(f *machine.SweepFacts) {
			f.InUse = []machine.Process{{PID: 42, Command: "cargo", Via: "cwd"}}
		}), 0, machine.SweepTree{ID: "a-1", Path: "/r/.worktrees/a-1", State: machine.StateActive, Discard: []machine.DiscardedDir{},
			Why: "process 42 (cargo) uses it via its cwd"}},
		{"an unreadable tree is not idle", with(func(f *machine.SweepFacts) { f.WalkErr = "open x: permission denied" }), 0,
			machine.SweepTree{ID: "a-1", Path: "/r/.worktrees/a-1", State: machine.StateActive, Discard: []machine.DiscardedDir{},
				Why: "its files could not all be read, so when it last changed is unknown: open x: permission denied"}},
		{"an observation that failed is not idle", with(func(f *machine.SweepFacts) { f.ObserveErr = "git status: exit 128" }), 0,
			machine.SweepTree{ID: "a-1", Path: "/r/.worktrees/a-1", State: machine.StateActive, Discard: []machine.DiscardedDir{},
				Why: "it could not be observed: git status: exit 128"}},
		{"an intent in flight is left to resume", with(func(f *machine.SweepFacts) {
			f.Record.Intent = &machine.Intent{Kind: machine.IntentRemoval}
		}), 0, machine.SweepTree{ID: "a-1", Path: "/r/.worktrees/a-1", State: machine.StateActive, Discard: []machine.DiscardedDir{},
			Why: "an operation is in flight (removal); custody resume settles it"}},
		{"a tombstoned record is left", with(func(f *machine.SweepFacts) { f.Record.State = machine.StateTombstoned }), 0,
			machine.SweepTree{ID: "a-1", Path: "/r/.worktrees/a-1", State: machine.StateTombstoned, Discard: []machine.DiscardedDir{},
				Why: "tombstoned, not active or finished"}},
		{"a missing tree is left", with(func(f *machine.SweepFacts) { f.PathState = machine.PathAbsent }), 0,
			machine.SweepTree{ID: "a-1", Path: "/r/.worktrees/a-1", State: machine.StateActive, Discard: []machine.DiscardedDir{},
				Why: "its path is absent"}},
		{"finished with unpushed work: archived", with(func(f *machine.SweepFacts) {
			f.Record.State, f.Plan = machine.StateFinished, unpushed
		}), 0, machine.SweepTree{ID: "a-1", Path: "/r/.worktrees/a-1", State: machine.StateFinished, Idle: true,
			Discard: []machine.DiscardedDir{target}, Archive: true}},
		{"an expired lease counts as finished", with(func(f *machine.SweepFacts) {
			f.Lease, f.Plan = &machine.Lease{Holder: "s1", Expires: now.Add(-time.Hour)}, unpushed
		}), 0, machine.SweepTree{ID: "a-1", Path: "/r/.worktrees/a-1", State: machine.StateActive, Idle: true,
			Discard: []machine.DiscardedDir{target}, Archive: true}},
		{"active without a lease is never archived", with(func(f *machine.SweepFacts) { f.Plan = unpushed }), 0,
			machine.SweepTree{ID: "a-1", Path: "/r/.worktrees/a-1", State: machine.StateActive, Idle: true, Discard: []machine.DiscardedDir{target}}},
		{"finished and proven: nothing to archive", with(func(f *machine.SweepFacts) {
			f.Record.State, f.Plan = machine.StateFinished, proven
		}), 0, machine.SweepTree{ID: "a-1", Path: "/r/.worktrees/a-1", State: machine.StateFinished, Idle: true, Discard: []machine.DiscardedDir{target}}},
		{"work an archive does not answer alone: not archived, says why", with(func(f *machine.SweepFacts) {
			f.Record.State, f.Plan = machine.StateFinished, inUse
		}), 0, machine.SweepTree{ID: "a-1", Path: "/r/.worktrees/a-1", State: machine.StateFinished, Idle: true,
			Discard: []machine.DiscardedDir{target}, ArchiveWhy: "plan keeps it for a reason an archive does not answer: [unpushed-commits] x"}},
		{"over --max-archive-size: not archived, says how", with(func(f *machine.SweepFacts) {
			f.Record.State, f.Plan, f.WorkBytes = machine.StateFinished, unpushed, 5000
		}), 4096, machine.SweepTree{ID: "a-1", Path: "/r/.worktrees/a-1", State: machine.StateFinished, Idle: true,
			Discard: []machine.DiscardedDir{target}, ArchiveWhy: "its unpublished files hold 5000 bytes, more than --max-archive-size 4096; custody finish --archive a-1 captures it by hand"}},
		{"plan failed: not archived, says why", with(func(f *machine.SweepFacts) {
			f.Record.State, f.PlanErr = machine.StateFinished, "no remote"
		}), 0, machine.SweepTree{ID: "a-1", Path: "/r/.worktrees/a-1", State: machine.StateFinished, Idle: true,
			Discard: []machine.DiscardedDir{target}, ArchiveWhy: "plan could not decide whether its work is published: no remote"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := machine.DecideSweep(c.facts, now, idle, c.max)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("DecideSweep (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSweepTimerFilesHoldAnyPath: the systemd units carry every byte of
// the program's path and the repository's as systemd's unquoting gives
// them back, and the launchd agent is a property list whose arguments an
// XML parser reads back exactly; a path a property list cannot hold is
// refused.
func TestSweepTimerFilesHoldAnyPath(t *testing.T) {
	exe := "/opt/my custody/bin%s/cust$HOME\"\\"
	dir := "/srv/re po/$x%n/\xff-é"
	units := machine.SystemdSweepUnits("custody-sweep-0123456789ab", exe, dir)
	if len(units) != 2 || units[0].Name != "custody-sweep-0123456789ab.service" || units[1].Name != "custody-sweep-0123456789ab.timer" {
		t.Fatalf("units %+v", units)
	}
	var exec string
	for _, l := range strings.Split(units[0].Content, "\n") {
		if v, ok := strings.CutPrefix(l, "ExecStart="); ok {
			exec = v
		}
	}
	want := `"/opt/my custody/bin%%s/cust$HOME\"\\" -C "/srv/re po/$$x%%n/\xff-\xc3\xa9" sweep`
	if exec != want {
		t.Errorf("ExecStart=%s\nwant      %s", exec, want)
	}
	if !strings.Contains(units[1].Content, "OnCalendar=daily\n") || !strings.Contains(units[1].Content, "Persistent=true\n") {
		t.Errorf("timer:\n%s", units[1].Content)
	}

	plain := "/opt/custody <&> é"
	f, err := machine.LaunchdSweepAgent("custody-sweep-0123456789ab", plain, "/Users/me/re po")
	if err != nil {
		t.Fatal(err)
	}
	if f.Name != "sh.custody.sweep-0123456789ab.plist" {
		t.Errorf("name %q", f.Name)
	}
	var args []string
	var inArgs bool
	var last string
	d := xml.NewDecoder(strings.NewReader(f.Content))
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the property list does not parse: %v\n%s", err, f.Content)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			if tk.Name.Local == "array" && last == "ProgramArguments" {
				inArgs = true
			}
		case xml.EndElement:
			if tk.Name.Local == "array" {
				inArgs = false
			}
		case xml.CharData:
			s := strings.TrimSpace(string(tk))
			if s == "" {
				continue
			}
			if inArgs {
				args = append(args, string(tk))
			}
			last = s
		}
	}
	if diff := cmp.Diff([]string{plain, "-C", "/Users/me/re po", "sweep"}, args); diff != "" {
		t.Errorf("ProgramArguments (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"/x/\xff", "/x/new\nline"} {
		if _, err := machine.LaunchdSweepAgent("n", bad, "/r"); !errors.Is(err, machine.ErrTimerPath) {
			t.Errorf("LaunchdSweepAgent(%q) = %v; want ErrTimerPath", bad, err)
		}
	}
	if a, b := machine.SweepTimerName("/r/.git"), machine.SweepTimerName("/s/.git"); a == b || !strings.HasPrefix(a, "custody-sweep-") || len(a) != len("custody-sweep-")+12 {
		t.Errorf("timer names %q, %q: want distinct custody-sweep-<12 hex>", a, b)
	}
}
