package machine_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
)

func archiveManifest() machine.ArchiveManifest {
	return machine.ArchiveManifest{
		Format: machine.ArchiveFormat, ID: "fix-1a2b3c-0011", Repository: "r1", Record: "fix-1a2b3c", Path: "/t/fix-1a2b3c",
		Head: "h1", WorktreeTree: "t1", HeadTree: "t0", ObjectFormat: "sha1", Commits: []string{"h1"},
		Files: []machine.ArchiveFile{
			{Name: machine.ArchiveBundleName, SHA256: "b", Size: 10},
			{Name: machine.ArchivePatchName, SHA256: "p", Size: 5},
			{Name: "nested-1.tar", SHA256: "n", Size: 20},
		},
		Nested:    []machine.ArchiveNested{{Path: "vendor/lib", Image: "nested-1.tar"}},
		EmptyDirs: []string{}, BuildOutput: []machine.DiscardedDir{},
	}
}

func archiveObs(t *testing.T, m machine.ArchiveManifest, edit func(o *machine.ArchiveDirObservation)) machine.ArchiveDirObservation {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	o := machine.ArchiveDirObservation{Dir: "/a/fix-1a2b3c-0011", Manifest: b, Pack: &machine.PackCheck{}}
	o.Entries = append(o.Entries, machine.ArchiveEntry{Name: machine.ArchiveManifestName, Regular: true, Size: int64(len(b))})
	for _, f := range m.Files {
		o.Entries = append(o.Entries, machine.ArchiveEntry{Name: f.Name, Regular: true, Size: f.Size, SHA256: f.SHA256})
	}
	if edit != nil {
		edit(&o)
	}
	return o
}

func entry(o *machine.ArchiveDirObservation, name string) *machine.ArchiveEntry {
	for i := range o.Entries {
		if o.Entries[i].Name == name {
			return &o.Entries[i]
		}
	}
	panic(name)
}

// TestCheckArchive: every way an archive directory fails to verify, in
// the fixed order, each with its code and the exact path.
func TestCheckArchive(t *testing.T) {
	t.Parallel()
	m := archiveManifest()
	drop := func(name string) func(o *machine.ArchiveDirObservation) {
		return func(o *machine.ArchiveDirObservation) {
			for i, e := range o.Entries {
				if e.Name == name {
					o.Entries = append(o.Entries[:i], o.Entries[i+1:]...)
					return
				}
			}
		}
	}
	withManifest := func(edit func(m *machine.ArchiveManifest)) machine.ArchiveManifest {
		c := archiveManifest()
		edit(&c)
		return c
	}
	type want struct {
		Code machine.Code
		Path string
	}
	for _, tt := range []struct {
		name string
		obs  machine.ArchiveDirObservation
		want []want
	}{
		{"verifies", archiveObs(t, m, nil), nil},
		{"pack check skipped still verifies the digests", archiveObs(t, m, func(o *machine.ArchiveDirObservation) { o.Pack.Skipped = "no repository" }), nil},
		{"symlinked dir", archiveObs(t, m, func(o *machine.ArchiveDirObservation) { o.Symlink = true }),
			[]want{{machine.CodeArchiveInvalid, "/a/fix-1a2b3c-0011"}}},
		{"unreadable dir", archiveObs(t, m, func(o *machine.ArchiveDirObservation) { o.Err = "permission denied" }),
			[]want{{machine.CodeArchiveInvalid, "/a/fix-1a2b3c-0011"}}},
		{"no manifest", archiveObs(t, m, func(o *machine.ArchiveDirObservation) { o.Manifest = nil }),
			[]want{{machine.CodeArchiveIncomplete, "/a/fix-1a2b3c-0011"}}},
		{"garbage manifest", archiveObs(t, m, func(o *machine.ArchiveDirObservation) { o.Manifest = []byte("{not json") }),
			[]want{{machine.CodeArchiveInvalid, "/a/fix-1a2b3c-0011"}}},
		{"foreign format", archiveObs(t, withManifest(func(m *machine.ArchiveManifest) { m.Format = "worktree.archive/3" }), nil),
			[]want{{machine.CodeArchiveInvalid, "/a/fix-1a2b3c-0011"}}},
		{"manifest names a path outside the dir", archiveObs(t, withManifest(func(m *machine.ArchiveManifest) { m.Files[1].Name = "../../etc/passwd" }), nil),
			[]want{{machine.CodeArchiveInvalid, "/a/fix-1a2b3c-0011"}}},
		{"nested root leaves the tree", archiveObs(t, withManifest(func(m *machine.ArchiveManifest) { m.Nested[0].Path = "../x" }), nil),
			[]want{{machine.CodeArchiveInvalid, "/a/fix-1a2b3c-0011"}}},
		{"missing bundle", archiveObs(t, m, drop(machine.ArchiveBundleName)),
			[]want{{machine.CodeArchiveIncomplete, "/a/fix-1a2b3c-0011/commits.bundle"}}},
		{"flipped byte in the patch", archiveObs(t, m, func(o *machine.ArchiveDirObservation) { entry(o, machine.ArchivePatchName).SHA256 = "q" }),
			[]want{{machine.CodeArchiveDigestMismatch, "/a/fix-1a2b3c-0011/dirty.patch"}}},
		{"truncated image", archiveObs(t, m, func(o *machine.ArchiveDirObservation) { entry(o, "nested-1.tar").Size = 19 }),
			[]want{{machine.CodeArchiveDigestMismatch, "/a/fix-1a2b3c-0011/nested-1.tar"}}},
		{"a recorded file that is a symlink", archiveObs(t, m, func(o *machine.ArchiveDirObservation) { entry(o, machine.ArchivePatchName).Regular = false }),
			[]want{{machine.CodeArchiveInvalid, "/a/fix-1a2b3c-0011/dirty.patch"}}},
		{"unrecorded content", archiveObs(t, m, func(o *machine.ArchiveDirObservation) {
			o.Entries = append(o.Entries, machine.ArchiveEntry{Name: "extra", Regular: true})
		}), []want{{machine.CodeArchiveInvalid, "/a/fix-1a2b3c-0011"}}},
		{"bundle without parents", archiveObs(t, m, func(o *machine.ArchiveDirObservation) { o.Pack.Missing = []string{"p1"} }),
			[]want{{machine.CodeArchiveBundleInvalid, "/a/fix-1a2b3c-0011/commits.bundle"}}},
		{"bundle does not index", archiveObs(t, m, func(o *machine.ArchiveDirObservation) { o.Pack.Err = "bad pack header" }),
			[]want{{machine.CodeArchiveBundleInvalid, "/a/fix-1a2b3c-0011/commits.bundle"}}},
		{"digests first: a bad digest hides the pack check", archiveObs(t, m, func(o *machine.ArchiveDirObservation) {
			entry(o, machine.ArchiveBundleName).SHA256 = "x"
			o.Pack.Err = "bad pack header"
		}), []want{{machine.CodeArchiveDigestMismatch, "/a/fix-1a2b3c-0011/commits.bundle"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, rs := machine.CheckArchive(tt.obs)
			var got []want
			for _, r := range rs {
				got = append(got, want{r.Code, r.Path})
				if !strings.HasPrefix(r.Retry, "custody archive verify ") {
					t.Errorf("refusal %s retries with %q", r.Code, r.Retry)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("CheckArchive (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckArchiveFresh(t *testing.T) {
	t.Parallel()
	m := archiveManifest()
	fp := m.Fingerprint()
	if r := machine.CheckArchiveFresh(m, fp); r != nil {
		t.Fatalf("the archived fingerprint is stale: %v", r)
	}
	for name, edit := range map[string]func(f *machine.ArchiveFingerprint){
		"head moved":         func(f *machine.ArchiveFingerprint) { f.Head = "h2" },
		"a file added after": func(f *machine.ArchiveFingerprint) { f.WorktreeTree = "t2" },
		"nested changed":     func(f *machine.ArchiveFingerprint) { f.Nested = map[string]string{"vendor/lib": "other"} },
		"nested added":       func(f *machine.ArchiveFingerprint) { f.Nested = map[string]string{"vendor/lib": "n", "new": "x"} },
	} {
		f := m.Fingerprint()
		edit(&f)
		r := machine.CheckArchiveFresh(m, f)
		if r == nil || r.Code != machine.CodeArchiveStale || r.Path != m.Path {
			t.Errorf("%s: %v, want archive-stale at %s", name, r, m.Path)
		}
	}
}

func TestTreePathSafe(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]bool{
		"a": true, "a/b": true, "-rf": true, "ünï/cödé": true, "a b/c": true,
		"": false, "/etc": false, "../x": false, "a/../b": false, "a/./b": false, "a//b": false,
		".git": false, "a/.GIT/config": false, "a\x00b": false,
	} {
		if got := machine.TreePathSafe(p); got != want {
			t.Errorf("TreePathSafe(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestDecideArchiveResume(t *testing.T) {
	t.Parallel()
	capture := &machine.ArchiveIntent{Kind: machine.IntentArchiveCapture, Scratch: "/a/.scratch-x", Dir: "/a/x"}
	prune := &machine.ArchiveIntent{Kind: machine.IntentArchivePrune, Dir: "/a/x"}
	bad := []machine.Refusal{{Code: machine.CodeArchiveDigestMismatch, Message: "dirty.patch differs"}}
	for _, tt := range []struct {
		name   string
		a      machine.Archive
		obs    machine.ArchiveResumeObservation
		action string
		code   machine.Code
	}{
		{"killed before the rename: discard", machine.Archive{ID: "x", State: machine.StateProvisioning, Intent: capture},
			machine.ArchiveResumeObservation{ScratchPresent: true}, machine.ArchiveResumeDiscard, ""},
		{"killed before any write: discard", machine.Archive{ID: "x", State: machine.StateProvisioning, Intent: capture},
			machine.ArchiveResumeObservation{}, machine.ArchiveResumeDiscard, ""},
		{"killed after the rename: seal", machine.Archive{ID: "x", State: machine.StateProvisioning, Intent: capture},
			machine.ArchiveResumeObservation{DirPresent: true}, machine.ArchiveResumeSeal, ""},
		{"renamed but damaged: refuse", machine.Archive{ID: "x", State: machine.StateProvisioning, Intent: capture},
			machine.ArchiveResumeObservation{DirPresent: true, Problems: bad}, "", machine.CodeArchiveDigestMismatch},
		{"prune killed midway: prune again", machine.Archive{ID: "x", State: machine.StateRemoving, Intent: prune},
			machine.ArchiveResumeObservation{DirPresent: true}, machine.ArchiveResumePrune, ""},
		{"prune killed after the rmdir: pruned", machine.Archive{ID: "x", State: machine.StateRemoving, Intent: prune},
			machine.ArchiveResumeObservation{}, machine.ArchiveResumePruned, ""},
		{"a capture intent on an active archive fits nothing", machine.Archive{ID: "x", State: machine.StateActive, Intent: capture},
			machine.ArchiveResumeObservation{}, "", machine.CodeResumeUnmatched},
	} {
		action, r := machine.DecideArchiveResume(tt.a, tt.obs)
		var code machine.Code
		if r != nil {
			code = r.Code
			if r.Retry == "" {
				t.Errorf("%s: refusal without a retry", tt.name)
			}
		}
		if action != tt.action || code != tt.code {
			t.Errorf("%s: DecideArchiveResume = %q, %v; want %q, %q", tt.name, action, r, tt.action, tt.code)
		}
	}
}

// TestArchiveMachine drives the archive kind through its lifecycle and its
// guards' refusals.
func TestArchiveMachine(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fire := func(a machine.Archive, tr machine.Trigger, f machine.ArchiveFiring) (machine.Archive, error) {
		f.Arc, f.Now = a, now
		var out machine.Archive
		m := machine.NewMachine(machine.ArchiveSpec(), a, func(_ context.Context, _, to machine.State, t machine.Trigger, f machine.ArchiveFiring) error {
			out = machine.NextArchive(a, to, t, f)
			return nil
		})
		if err := m.Fire(ctx, tr, f); err != nil {
			return a, err
		}
		return out, nil
	}
	in := &machine.ArchiveIntent{Kind: machine.IntentArchiveCapture, Scratch: "/a/.scratch-x", Dir: "/a/x"}
	a, err := fire(machine.Archive{ID: "x"}, machine.TriggerCapture, machine.ArchiveFiring{Intent: in})
	if err != nil || a.State != machine.StateProvisioning || a.Dir != "/a/x" || a.Intent == nil {
		t.Fatalf("capture: %+v %v", a, err)
	}
	var r *machine.Refusal
	if _, err := fire(a, machine.TriggerSeal, machine.ArchiveFiring{}); !errors.As(err, &r) || r.Code != machine.CodeGuardFailed ||
		!strings.Contains(r.Message, "archiveVerified") {
		t.Errorf("seal unverified: %v, want guard-failed naming archiveVerified", err)
	}
	a, err = fire(a, machine.TriggerSeal, machine.ArchiveFiring{Verified: true, Manifest: "m1"})
	if err != nil || a.State != machine.StateActive || a.Intent != nil || a.Manifest != "m1" {
		t.Fatalf("seal: %+v %v", a, err)
	}
	if _, err := fire(a, machine.TriggerSoleCopy, machine.ArchiveFiring{TreeGone: false, Verified: true}); !errors.As(err, &r) {
		t.Errorf("sole-copy with the tree present: %v", err)
	}
	a, err = fire(a, machine.TriggerSoleCopy, machine.ArchiveFiring{TreeGone: true, Verified: true})
	if err != nil || a.State != machine.StateFinished {
		t.Fatalf("sole-copy: %+v %v", a, err)
	}
	if _, err := fire(a, machine.TriggerPrune, machine.ArchiveFiring{Intent: &machine.ArchiveIntent{Kind: machine.IntentArchivePrune, Dir: "/elsewhere"}}); !errors.As(err, &r) {
		t.Errorf("prune of another dir: %v", err)
	}
	a, err = fire(a, machine.TriggerPrune, machine.ArchiveFiring{Intent: &machine.ArchiveIntent{Kind: machine.IntentArchivePrune, Dir: "/a/x"}})
	if err != nil || a.State != machine.StateRemoving {
		t.Fatalf("prune: %+v %v", a, err)
	}
	a, err = fire(a, machine.TriggerPruned, machine.ArchiveFiring{DirGone: true})
	if err != nil || a.State != machine.StateTombstoned || a.Outcome != "pruned" {
		t.Fatalf("pruned: %+v %v", a, err)
	}
	if _, err := fire(a, machine.TriggerSeal, machine.ArchiveFiring{Verified: true, Manifest: "m"}); !errors.As(err, &r) || r.Code != machine.CodeWrongState {
		t.Errorf("seal a tombstone: %v, want wrong-state", err)
	}
	// Discard needs the scratch verified gone.
	b, _ := fire(machine.Archive{ID: "y"}, machine.TriggerCapture, machine.ArchiveFiring{Intent: in})
	if _, err := fire(b, machine.TriggerDiscard, machine.ArchiveFiring{}); !errors.As(err, &r) || !strings.Contains(r.Message, "scratchRemoved") {
		t.Errorf("discard with scratch present: %v", err)
	}
	if b, err = fire(b, machine.TriggerDiscard, machine.ArchiveFiring{ScratchGone: true}); err != nil || b.State != machine.StateTombstoned {
		t.Errorf("discard: %+v %v", b, err)
	}
	if !strings.Contains(machine.ArchiveGraph(), "sole-copy") {
		t.Errorf("the drawn graph lacks sole-copy")
	}
}

func TestDecideArchiveProof(t *testing.T) {
	t.Parallel()
	rec := machine.Record{ID: "fix-1a2b3c", Path: "/t/fix-1a2b3c"}
	m := archiveManifest()
	good := machine.ArchiveProofObservation{Archive: machine.Archive{ID: m.ID, State: machine.StateActive}, Manifest: m, Head: "h1", PrerequisitesPublished: true}
	p, r := machine.DecideArchiveProof(rec, good)
	if r != nil || p == nil || p.Kind != machine.ProofArchive || p.Ref != m.ID || !p.Covers("h1") {
		t.Fatalf("DecideArchiveProof of a good archive = %+v, %v", p, r)
	}
	stale := machine.CheckArchiveFresh(m, machine.ArchiveFingerprint{Head: "h1", WorktreeTree: "t9"})
	for name, tt := range map[string]struct {
		edit func(o *machine.ArchiveProofObservation)
		code machine.Code
	}{
		"a damaged archive": {func(o *machine.ArchiveProofObservation) {
			o.Problems = []machine.Refusal{{Code: machine.CodeArchiveDigestMismatch}}
		}, machine.CodeArchiveDigestMismatch},
		"not sealed":                {func(o *machine.ArchiveProofObservation) { o.Archive.State = machine.StateProvisioning }, machine.CodeArchiveInvalid},
		"another record's":          {func(o *machine.ArchiveProofObservation) { o.Manifest.Record = "other" }, machine.CodeArchiveInvalid},
		"another path":              {func(o *machine.ArchiveProofObservation) { o.Manifest.Path = "/elsewhere" }, machine.CodeArchiveInvalid},
		"HEAD moved":                {func(o *machine.ArchiveProofObservation) { o.Head = "h2" }, machine.CodeArchiveStale},
		"a file added after":        {func(o *machine.ArchiveProofObservation) { o.Fresh = stale }, machine.CodeArchiveStale},
		"prerequisites unpublished": {func(o *machine.ArchiveProofObservation) { o.PrerequisitesPublished = false }, machine.CodeArchiveBundleInvalid},
	} {
		o := good
		o.Manifest = archiveManifest()
		tt.edit(&o)
		p, r := machine.DecideArchiveProof(rec, o)
		if p != nil || r == nil || r.Code != tt.code {
			t.Errorf("%s: %+v, %v; want %s", name, p, r, tt.code)
		}
	}
}

func TestCoverByArchive(t *testing.T) {
	t.Parallel()
	p := &machine.Proof{Kind: machine.ProofArchive, Ref: "a1", Head: "h1"}
	stale := &machine.Refusal{Code: machine.CodeArchiveStale}
	keep := func(codes ...machine.Code) machine.Verdict {
		v := machine.Verdict{Action: machine.ActionKeep}
		for _, c := range codes {
			v.Refusals = append(v.Refusals, machine.Refusal{Code: c})
		}
		return v
	}
	for _, tt := range []struct {
		name string
		v    machine.Verdict
		p    *machine.Proof
		r    *machine.Refusal
		want machine.Verdict
	}{
		{"dirty and unpushed, archived", keep(machine.CodeUntrackedFiles, machine.CodeUnpushedCommits), p, nil, machine.Verdict{Action: machine.ActionRemove, Proof: p}},
		{"a lease is never archived away", keep(machine.CodeUntrackedFiles, machine.CodeLeaseLive), p, nil, keep(machine.CodeUntrackedFiles, machine.CodeLeaseLive)},
		{"staged content is not archived", keep(machine.CodeStagedDiffers), p, nil, keep(machine.CodeStagedDiffers)},
		{"a stale archive says so", keep(machine.CodeIgnoredFiles), nil, stale, keep(machine.CodeIgnoredFiles, machine.CodeArchiveStale)},
		{"no archive", keep(machine.CodeIgnoredFiles), nil, nil, keep(machine.CodeIgnoredFiles)},
		{"removable already", machine.Verdict{Action: machine.ActionRemove}, p, nil, machine.Verdict{Action: machine.ActionRemove}},
	} {
		if diff := cmp.Diff(tt.want, machine.CoverByArchive(tt.v, tt.p, tt.r)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

// TestDecideArchivePrune: the fixed order of prune's checks, each with its
// code; the remotes only once every local check passed.
func TestDecideArchivePrune(t *testing.T) {
	t.Parallel()
	clean := func() machine.ArchiveManifest {
		m := archiveManifest()
		m.Files = []machine.ArchiveFile{{Name: machine.ArchiveBundleName, SHA256: "b", Size: 10}, {Name: machine.ArchivePatchName, SHA256: "e", Size: 0}}
		m.Nested = []machine.ArchiveNested{}
		return m
	}
	asked := &machine.ArchivePruneRemote{}
	for _, tt := range []struct {
		name string
		m    machine.ArchiveManifest
		edit func(o *machine.ArchivePruneObservation)
		code machine.Code
	}{
		{"removable", clean(), func(o *machine.ArchivePruneObservation) { o.Remote = asked }, ""},
		{"symlinked dir", clean(), func(o *machine.ArchivePruneObservation) { o.Dir.Symlink = true; o.Remote = asked }, machine.CodeArchiveInvalid},
		{"unrecorded content", clean(), func(o *machine.ArchivePruneObservation) {
			o.Dir.Entries = append(o.Dir.Entries, machine.ArchiveEntry{Name: "notes", Regular: true})
			o.Remote = asked
		}, machine.CodeArchiveInvalid},
		{"manifest names a path outside", func() machine.ArchiveManifest { m := clean(); m.Files[0].Name = "../x"; return m }(),
			func(o *machine.ArchivePruneObservation) { o.Remote = asked }, machine.CodeArchiveInvalid},
		{"tree present", clean(), func(o *machine.ArchivePruneObservation) { o.TreePresent = true; o.Remote = asked }, machine.CodeArchiveTreePresent},
		{"tree unknown", clean(), func(o *machine.ArchivePruneObservation) { o.TreeErr = "permission denied"; o.Remote = asked }, machine.CodePathUnknown},
		{"nested", archiveManifest(), func(o *machine.ArchivePruneObservation) { o.Remote = asked }, machine.CodeArchiveNested},
		{"uncommitted", func() machine.ArchiveManifest { m := clean(); m.Files[1].Size = 3; return m }(),
			func(o *machine.ArchivePruneObservation) { o.Remote = asked }, machine.CodeArchiveUncommitted},
		{"empty dirs", func() machine.ArchiveManifest { m := clean(); m.EmptyDirs = []string{"d"}; return m }(),
			func(o *machine.ArchivePruneObservation) { o.Remote = asked }, machine.CodeArchiveUncommitted},
		{"remotes not asked", clean(), nil, machine.CodeRemoteUnavailable},
		{"remote down", clean(), func(o *machine.ArchivePruneObservation) {
			o.Remote = &machine.ArchivePruneRemote{Unavailable: []string{"origin"}}
		}, machine.CodeRemoteUnavailable},
		{"commits a remote lacks", clean(), func(o *machine.ArchivePruneObservation) {
			o.Remote = &machine.ArchivePruneRemote{NotOnRemote: []string{"h1"}}
		}, machine.CodeUnpushedCommits},
		{"tree present comes before the remote", clean(), func(o *machine.ArchivePruneObservation) {
			o.TreePresent = true
			o.Remote = &machine.ArchivePruneRemote{NotOnRemote: []string{"h1"}}
		}, machine.CodeArchiveTreePresent},
	} {
		obs := machine.ArchivePruneObservation{Dir: archiveObs(t, tt.m, nil)}
		obs.Dir.Pack = nil
		if tt.edit != nil {
			tt.edit(&obs)
		}
		_, r := machine.DecideArchivePrune(obs)
		var code machine.Code
		if r != nil {
			code = r.Code
		}
		if code != tt.code {
			t.Errorf("%s: DecideArchivePrune = %v, want %q", tt.name, r, tt.code)
		}
		if tt.name == "remotes not asked" && !machine.ArchivePruneNeedsRemote(obs) {
			t.Errorf("a clean archive does not ask the remotes")
		}
		if tt.name == "tree present" && machine.ArchivePruneNeedsRemote(obs) {
			t.Errorf("an archive kept by a local check asks the remotes")
		}
	}
}

// TestCaptureCovers: remove --archive captures only when the archive made
// would answer every reason the tree is kept for; an earlier archive that
// no longer fits is no reason not to capture a new one.
func TestCaptureCovers(t *testing.T) {
	t.Parallel()
	rs := func(codes ...machine.Code) []machine.Refusal {
		var out []machine.Refusal
		for _, c := range codes {
			out = append(out, machine.Refusal{Code: c})
		}
		return out
	}
	for _, tt := range []struct {
		name string
		rs   []machine.Refusal
		want bool
	}{
		{"unpushed and untracked", rs(machine.CodeUnpushedCommits, machine.CodeUntrackedFiles), true},
		{"ignored files and a stale archive", rs(machine.CodeIgnoredFiles, machine.CodeArchiveStale), true},
		{"a damaged archive", rs(machine.CodeTrackedChanges, machine.CodeArchiveDigestMismatch, machine.CodeArchiveIncomplete, machine.CodeArchiveInvalid, machine.CodeArchiveBundleInvalid), true},
		{"only a stale archive", rs(machine.CodeArchiveStale), false},
		{"a process inside", rs(machine.CodeUntrackedFiles, machine.CodeInUse), false},
		{"a live lease", rs(machine.CodeLeaseLive), false},
		{"staged content", rs(machine.CodeStagedDiffers), false},
		{"nothing", nil, false},
	} {
		if got := machine.CaptureCovers(tt.rs); got != tt.want {
			t.Errorf("%s: CaptureCovers = %v, want %v", tt.name, got, tt.want)
		}
	}
}
