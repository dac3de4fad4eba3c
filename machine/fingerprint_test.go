package machine_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/custody-sh/custody/machine"
)

var seedFlag = flag.Uint64("seed", 0, "seed of the randomized fingerprint test (0: time-based)")

var fingerprintRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// fullObs is an observation with every fingerprinted field set, so that
// each mutation below changes exactly one of them.
func fullObs() machine.WorktreeObservation {
	o := removableObs()
	o.Status = machine.Status{
		Changed:   []string{"b.go", "a.go"},
		Staged:    1,
		Unmerged:  []string{"z", "y"},
		Untracked: []string{"n2", "n1"},
		Ignored:   []string{".env", ".cache"},
	}
	o.Hidden = []machine.Hidden{
		{Code: "skip-worktree", Path: "vendor/x"},
		{Code: "nested-git", Path: "sub", Detail: "a repository"},
	}
	return o
}

func TestFingerprintOrderIndependent(t *testing.T) {
	t.Parallel()
	a := fullObs()
	b := fullObs()
	slices.Reverse(b.Status.Changed)
	slices.Reverse(b.Status.Unmerged)
	slices.Reverse(b.Status.Untracked)
	slices.Reverse(b.Status.Ignored)
	slices.Reverse(b.Hidden)
	fa, fb := machine.Fingerprint(a), machine.Fingerprint(b)
	if fa != fb {
		t.Errorf("reordered lists change the fingerprint: %s != %s", fa, fb)
	}
	if !fingerprintRE.MatchString(fa) {
		t.Errorf("Fingerprint = %q, want sha256:<64 hex>", fa)
	}
	if diff := slices.Compare(a.Status.Changed, []string{"b.go", "a.go"}); diff != 0 {
		t.Errorf("Fingerprint sorted its input in place: %v", a.Status.Changed)
	}
	if a.Hidden[0].Code != "skip-worktree" {
		t.Errorf("Fingerprint sorted Hidden in place: %v", a.Hidden)
	}
	if fa != machine.Fingerprint(fullObs()) {
		t.Errorf("Fingerprint is not deterministic")
	}
	empty := machine.WorktreeObservation{Path: testPath}
	emptyLists := empty
	emptyLists.Status = machine.Status{Changed: []string{}, Unmerged: []string{}, Untracked: []string{}, Ignored: []string{}}
	if machine.Fingerprint(empty) != machine.Fingerprint(emptyLists) {
		t.Errorf("nil and empty status lists fingerprint differently")
	}
}

func TestFingerprintChanges(t *testing.T) {
	t.Parallel()
	base := machine.Fingerprint(fullObs())
	tests := []struct {
		name   string
		mutate func(*machine.WorktreeObservation)
	}{
		{"path", func(o *machine.WorktreeObservation) { o.Path += "x" }},
		{"path-state", func(o *machine.WorktreeObservation) { o.PathState = machine.PathUnknown }},
		{"is-dir", func(o *machine.WorktreeObservation) { o.IsDir = false }},
		{"is-symlink", func(o *machine.WorktreeObservation) { o.IsSymlink = true }},
		{"dev", func(o *machine.WorktreeObservation) { o.Dev++ }},
		{"ino", func(o *machine.WorktreeObservation) { o.Ino++ }},
		{"registered", func(o *machine.WorktreeObservation) { o.Registered = false }},
		{"admin-key", func(o *machine.WorktreeObservation) { o.AdminKey = "other" }},
		{"head", func(o *machine.WorktreeObservation) { o.Head = otherHead }},
		{"branch", func(o *machine.WorktreeObservation) { o.Branch = "main" }},
		{"detached", func(o *machine.WorktreeObservation) { o.Detached = true }},
		{"locked", func(o *machine.WorktreeObservation) { o.Locked = true }},
		{"prunable", func(o *machine.WorktreeObservation) { o.Prunable = true }},
		{"marker", func(o *machine.WorktreeObservation) { o.Marker = "" }},
		{"changed", func(o *machine.WorktreeObservation) { o.Status.Changed = append(o.Status.Changed, "c.go") }},
		{"changed-renamed", func(o *machine.WorktreeObservation) { o.Status.Changed[0] = "B.go" }},
		{"staged", func(o *machine.WorktreeObservation) { o.Status.Staged = 2 }},
		{"unmerged", func(o *machine.WorktreeObservation) { o.Status.Unmerged = o.Status.Unmerged[:1] }},
		{"untracked", func(o *machine.WorktreeObservation) { o.Status.Untracked = nil }},
		{"ignored", func(o *machine.WorktreeObservation) { o.Status.Ignored = append(o.Status.Ignored, "x.log") }},
		// The same name moving from one list to another is a change.
		{"untracked-to-ignored", func(o *machine.WorktreeObservation) {
			o.Status.Untracked = []string{"n1"}
			o.Status.Ignored = append(o.Status.Ignored, "n2")
		}},
		{"status-error", func(o *machine.WorktreeObservation) { o.StatusErr = "fatal" }},
		{"hidden-added", func(o *machine.WorktreeObservation) {
			o.Hidden = append(o.Hidden, machine.Hidden{Code: "assume-unchanged", Path: "a.go"})
		}},
		{"hidden-removed", func(o *machine.WorktreeObservation) { o.Hidden = o.Hidden[:1] }},
		{"hidden-path", func(o *machine.WorktreeObservation) { o.Hidden[0].Path = "vendor/y" }},
		{"hidden-code", func(o *machine.WorktreeObservation) { o.Hidden[0].Code = "assume-unchanged" }},
		{"hidden-detail", func(o *machine.WorktreeObservation) { o.Hidden[1].Detail = "another repository" }},
	}
	seen := map[string]string{base: "base"}
	for _, tt := range tests {
		o := fullObs()
		tt.mutate(&o)
		got := machine.Fingerprint(o)
		if prev, ok := seen[got]; ok {
			t.Errorf("%s: fingerprint equals that of %s", tt.name, prev)
			continue
		}
		seen[got] = tt.name
	}
}

// TestFingerprintIgnoresRemoteState: proof, remote and lease are found
// fresh at apply; their change does not make the tree another tree.
func TestFingerprintIgnoresRemoteState(t *testing.T) {
	t.Parallel()
	base := machine.Fingerprint(fullObs())
	tests := []struct {
		name   string
		mutate func(*machine.WorktreeObservation)
	}{
		{"proof-nil", func(o *machine.WorktreeObservation) { o.Proof = nil }},
		{"proof-tip", func(o *machine.WorktreeObservation) { o.Proof.Tip = otherHead }},
		{"proof-kind", func(o *machine.WorktreeObservation) { o.Proof.Kind = machine.ProofSquashMerged }},
		{"proof-error", func(o *machine.WorktreeObservation) { o.ProofErr = "timeout" }},
		{"remote-added", func(o *machine.WorktreeObservation) { o.Remote.Remotes = append(o.Remote.Remotes, "backup") }},
		{"remote-unavailable", func(o *machine.WorktreeObservation) {
			o.Remote.Unavailable = []machine.RemoteFailure{{Remote: "origin", Error: "timeout"}}
		}},
		{"no-remote", func(o *machine.WorktreeObservation) { o.Remote = machine.RemoteEvidence{} }},
		{"lease-live", func(o *machine.WorktreeObservation) { o.Lease = lease(testNow.Add(time.Hour)) }},
		{"lease-expired", func(o *machine.WorktreeObservation) { o.Lease = lease(testNow.Add(-time.Hour)) }},
	}
	for _, tt := range tests {
		o := fullObs()
		tt.mutate(&o)
		if got := machine.Fingerprint(o); got != base {
			t.Errorf("%s changed the fingerprint", tt.name)
		}
	}
}

// TestFingerprintShuffled: a shuffled copy of a random observation has the
// same fingerprint; the same observation with one random change does not.
// Reproduce a failure with -seed=N.
func TestFingerprintShuffled(t *testing.T) {
	t.Parallel()
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with: go test ./machine/ -run TestFingerprintShuffled -seed=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))

	for i := range 500 {
		o := randomObs(rng)
		want := machine.Fingerprint(o)

		s := cloneObs(o)
		for _, l := range [][]string{s.Status.Changed, s.Status.Unmerged, s.Status.Untracked, s.Status.Ignored} {
			rng.Shuffle(len(l), func(i, j int) { l[i], l[j] = l[j], l[i] })
		}
		rng.Shuffle(len(s.Hidden), func(i, j int) { s.Hidden[i], s.Hidden[j] = s.Hidden[j], s.Hidden[i] })
		if got := machine.Fingerprint(s); got != want {
			t.Fatalf("iteration %d: shuffled copy fingerprints differently\noriginal %+v\nshuffled %+v", i, o, s)
		}

		c := cloneObs(o)
		what := mutateOne(rng, &c)
		if machine.Fingerprint(c) == want {
			t.Fatalf("iteration %d: changing %s left the fingerprint unchanged", i, what)
		}
	}
}

func randomNames(rng *rand.Rand, prefix string) []string {
	n := rng.IntN(6)
	if n == 0 {
		return nil
	}
	// Distinct names: a status list names each path once.
	perm := rng.Perm(20)[:n]
	out := make([]string, n)
	for i, p := range perm {
		out[i] = fmt.Sprintf("%s%d", prefix, p)
	}
	return out
}

func randomObs(rng *rand.Rand) machine.WorktreeObservation {
	states := []machine.PathState{machine.PathPresent, machine.PathAbsent, machine.PathUnknown}
	o := machine.WorktreeObservation{
		Path:       fmt.Sprintf("/repo/.worktrees/w%d", rng.IntN(5)),
		PathState:  states[rng.IntN(len(states))],
		IsDir:      rng.IntN(2) == 0,
		IsSymlink:  rng.IntN(2) == 0,
		Dev:        rng.Uint64N(4),
		Ino:        rng.Uint64(),
		Registered: rng.IntN(2) == 0,
		AdminKey:   fmt.Sprintf("k%d", rng.IntN(3)),
		Head:       fmt.Sprintf("%040x", rng.Uint64()),
		Branch:     fmt.Sprintf("b%d", rng.IntN(3)),
		Detached:   rng.IntN(2) == 0,
		Locked:     rng.IntN(2) == 0,
		Prunable:   rng.IntN(2) == 0,
		Marker:     fmt.Sprintf("m%d", rng.IntN(3)),
		Status: machine.Status{
			Changed:   randomNames(rng, "c"),
			Staged:    rng.IntN(3),
			Unmerged:  randomNames(rng, "u"),
			Untracked: randomNames(rng, "n"),
			Ignored:   randomNames(rng, "i"),
		},
		Lease: lease(testNow.Add(time.Duration(rng.IntN(3)-1) * time.Hour)),
		Proof: removableProof(),
	}
	// Hidden entries with distinct (code, path): see the report on ties.
	codes := []machine.Code{"nested-git", "skip-worktree", "assume-unchanged"}
	for _, p := range rng.Perm(6)[:rng.IntN(6)] {
		o.Hidden = append(o.Hidden, machine.Hidden{Code: codes[p%3], Path: fmt.Sprintf("h%d", p/3), Detail: fmt.Sprintf("d%d", rng.IntN(3))})
	}
	return o
}

func cloneObs(o machine.WorktreeObservation) machine.WorktreeObservation {
	o.Status.Changed = slices.Clone(o.Status.Changed)
	o.Status.Unmerged = slices.Clone(o.Status.Unmerged)
	o.Status.Untracked = slices.Clone(o.Status.Untracked)
	o.Status.Ignored = slices.Clone(o.Status.Ignored)
	o.Hidden = slices.Clone(o.Hidden)
	return o
}

// mutateOne changes one fingerprinted field of o and names it.
func mutateOne(rng *rand.Rand, o *machine.WorktreeObservation) string {
	switch rng.IntN(16) {
	case 0:
		o.Path += "/"
		return "path"
	case 1:
		o.IsDir = !o.IsDir
		return "is_dir"
	case 2:
		o.IsSymlink = !o.IsSymlink
		return "is_symlink"
	case 3:
		o.Dev++
		return "dev"
	case 4:
		o.Ino++
		return "ino"
	case 5:
		o.Registered = !o.Registered
		return "registered"
	case 6:
		o.Head = otherHead
		return "head"
	case 7:
		o.Branch += "x"
		return "branch"
	case 8:
		o.Locked = !o.Locked
		return "locked"
	case 9:
		o.Marker += "x"
		return "marker"
	case 10:
		o.Status.Changed = append(o.Status.Changed, "new")
		return "changed"
	case 11:
		o.Status.Unmerged = append(o.Status.Unmerged, "new")
		return "unmerged"
	case 12:
		o.Status.Untracked = append(o.Status.Untracked, "new")
		return "untracked"
	case 13:
		o.Status.Ignored = append(o.Status.Ignored, "new")
		return "ignored"
	case 14:
		o.Hidden = append(o.Hidden, machine.Hidden{Code: "new", Path: "new"})
		return "hidden"
	default:
		o.Detached = !o.Detached
		return "detached"
	}
}
