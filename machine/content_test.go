package machine_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
)

func TestAccountContent(t *testing.T) {
	const (
		a = "1111111111111111111111111111111111111111"
		b = "2222222222222222222222222222222222222222"
	)
	file := func(p, oid string) machine.DiskEntry {
		return machine.DiskEntry{Path: p, Kind: machine.EntryFile, OID: oid}
	}
	dir := func(p string) machine.DiskEntry { return machine.DiskEntry{Path: p, Kind: machine.EntryDir} }
	tracked := []machine.TrackedEntry{
		{Path: "README", Mode: "100644", OID: a},
		{Path: "src/run.sh", Mode: "100755", OID: b},
		{Path: "link", Mode: "120000", OID: a},
		{Path: "sub", Mode: "160000", OID: b},
	}
	clean := []machine.DiskEntry{
		file("README", a), dir("src"), {Path: "src/run.sh", Kind: machine.EntryFile, Exec: true, OID: b},
		{Path: "link", Kind: machine.EntrySymlink, OID: a}, dir("sub"),
	}
	with := func(extra ...machine.DiskEntry) []machine.DiskEntry {
		return append(append([]machine.DiskEntry{}, clean...), extra...)
	}
	replace := func(i int, e machine.DiskEntry) []machine.DiskEntry {
		d := append([]machine.DiskEntry{}, clean...)
		d[i] = e
		return d
	}
	tests := []struct {
		name string
		disk []machine.DiskEntry
		skip []string
		want []machine.Unaccounted
	}{
		{name: "clean tree", disk: clean},
		{name: "a tracked path missing on disk is no loss", disk: clean[:1]},
		{name: "same size, other bytes", disk: replace(0, file("README", b)),
			want: []machine.Unaccounted{{Code: machine.CodeContentDiffers, Path: "README"}}},
		{name: "executable bit gained", disk: replace(0, machine.DiskEntry{Path: "README", Kind: machine.EntryFile, Exec: true, OID: a}),
			want: []machine.Unaccounted{{Code: machine.CodeContentDiffers, Path: "README"}}},
		{name: "executable bit lost", disk: replace(2, file("src/run.sh", b)),
			want: []machine.Unaccounted{{Code: machine.CodeContentDiffers, Path: "src/run.sh"}}},
		{name: "symlink replaced by a file with its target's bytes", disk: replace(3, file("link", a)),
			want: []machine.Unaccounted{{Code: machine.CodeContentDiffers, Path: "link"}}},
		{name: "symlink retargeted", disk: replace(3, machine.DiskEntry{Path: "link", Kind: machine.EntrySymlink, OID: b}),
			want: []machine.Unaccounted{{Code: machine.CodeContentDiffers, Path: "link"}}},
		{name: "case-only rename", disk: replace(0, file("readme", a)),
			want: []machine.Unaccounted{{Code: machine.CodeUntrackedContent, Path: "readme"}}},
		{name: "file inside an uninitialised submodule's directory", disk: with(file("sub/x.c", a)),
			want: []machine.Unaccounted{{Code: machine.CodeUntrackedContent, Path: "sub/x.c"}}},
		{name: "empty untracked directory", disk: with(dir("tmp")),
			want: []machine.Unaccounted{{Code: machine.CodeUntrackedContent, Path: "tmp/"}}},
		{name: "untracked directory reported through its file", disk: with(dir("tmp"), file("tmp/debug.log", a)),
			want: []machine.Unaccounted{{Code: machine.CodeUntrackedContent, Path: "tmp/debug.log"}}},
		{name: "a FIFO", disk: with(machine.DiskEntry{Path: "pipe", Kind: machine.EntryOther}),
			want: []machine.Unaccounted{{Code: machine.CodeUntrackedContent, Path: "pipe"}}},
		{name: "a tracked path replaced by a FIFO", disk: replace(0, machine.DiskEntry{Path: "README", Kind: machine.EntryOther}),
			want: []machine.Unaccounted{{Code: machine.CodeUntrackedContent, Path: "README"}}},
		{name: "a tracked path replaced by a directory", disk: replace(0, dir("README")),
			want: []machine.Unaccounted{{Code: machine.CodeUntrackedContent, Path: "README/"}}},
		{name: "unreadable", disk: replace(0, machine.DiskEntry{Path: "README", Kind: machine.EntryFile, Err: "permission denied"}),
			want: []machine.Unaccounted{{Code: machine.CodeContentUnreadable, Path: "README"}}},
		{name: "what status reported is not reported again",
			disk: with(file("a.log", a), dir("build"), file("build/out", a), file("src/new.c", a)),
			skip: []string{"a.log", "build/", "src/new.c"}},
		{name: "sorted by path", disk: with(file("z", a), file("a", a), file("m/x", a), dir("m")),
			want: []machine.Unaccounted{{Code: machine.CodeUntrackedContent, Path: "a"}, {Code: machine.CodeUntrackedContent, Path: "m/x"}, {Code: machine.CodeUntrackedContent, Path: "z"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := machine.AccountContent(tc.disk, tracked, tc.skip)
			for i := range got {
				got[i].Detail = "" // the detail is prose; the code and path decide
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("AccountContent (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAssessRendersUnaccountedContent(t *testing.T) {
	us := []machine.Unaccounted{
		{Code: machine.CodeContentDiffers, Path: "a.ipynb", Detail: "bytes differ"},
		{Code: machine.CodeUntrackedContent, Path: "x"},
		{Code: machine.CodeUntrackedContent, Path: "y"},
	}
	rec, obs := removableRecord(), removableObs()
	obs.Content = us
	v := machine.Assess(rec, obs, machine.DefaultPolicy(), testNow)
	var got []string
	for _, r := range v.Refusals {
		got = append(got, string(r.Code)+" "+r.Path)
	}
	want := []string{"content-differs " + rec.Path + "/a.ipynb", "untracked-content " + rec.Path}
	if v.Action != machine.ActionKeep || !cmp.Equal(want, got) {
		t.Fatalf("Assess = %s %v, want keep %v", v.Action, got, want)
	}
	if !strings.Contains(v.Refusals[1].Message, "x, y") {
		t.Errorf("message %q does not name both paths", v.Refusals[1].Message)
	}
	if machine.Fingerprint(obs) == machine.Fingerprint(func() machine.WorktreeObservation { o := obs; o.Content = nil; return o }()) {
		t.Error("the fingerprint does not cover unaccounted content")
	}
}
