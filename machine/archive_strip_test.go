package machine_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
)

func stripEntries(paths ...string) []machine.ArchiveTreeEntry {
	var out []machine.ArchiveTreeEntry
	for _, p := range paths {
		out = append(out, machine.ArchiveTreeEntry{Path: p, Mode: "100644", Size: 10})
	}
	return out
}

// TestPlanArchiveStrip: Cargo targets and Flutter output are recognised by
// structure alone, only as pure additions, outermost first; a name alone,
// anything HEAD holds, a nested repository, a link leading out or an
// unsigned CACHEDIR.TAG keeps the directory in the patch.
func TestPlanArchiveStrip(t *testing.T) {
	t.Parallel()
	cargo := func(p string, bytes int64) machine.DiscardedDir {
		return machine.DiscardedDir{Path: p, Kind: machine.BuildCargoTarget, Bytes: bytes}
	}
	flutter := func(p string, bytes int64) machine.DiscardedDir {
		return machine.DiscardedDir{Path: p, Kind: machine.BuildFlutterOutput, Bytes: bytes}
	}
	base := []string{"Cargo.toml", "src/main.rs"}
	tests := []struct {
		name string
		f    machine.ArchiveStripFacts
		want []machine.DiscardedDir
	}{
		{"signed tag", machine.ArchiveStripFacts{Head: base, Entries: stripEntries("Cargo.toml", "src/main.rs", "out/CACHEDIR.TAG", "out/x"), SignedTags: []string{"out/CACHEDIR.TAG"}},
			[]machine.DiscardedDir{cargo("out", 20)}},
		{"unsigned tag disqualifies", machine.ArchiveStripFacts{Head: base, Entries: stripEntries("t/CACHEDIR.TAG", "t/.rustc_info.json")}, nil},
		{"profile, outermost only", machine.ArchiveStripFacts{Head: base, Entries: stripEntries("target/debug/.fingerprint/a/b", "target/debug/app", "target/release/.fingerprint/c/d")},
			[]machine.DiscardedDir{cargo("target", 30)}},
		{"rustc info", machine.ArchiveStripFacts{Head: base, Entries: stripEntries("tgt/.rustc_info.json")}, []machine.DiscardedDir{cargo("tgt", 10)}},
		{"rustc info as a link is not", machine.ArchiveStripFacts{Head: base, Entries: []machine.ArchiveTreeEntry{{Path: "tgt/.rustc_info.json", Mode: "120000", Size: 3}},
			LinkTargets: map[string]string{"tgt/.rustc_info.json": "x"}}, nil},
		{"flutter beside HEAD's pubspec", machine.ArchiveStripFacts{Head: []string{"app/pubspec.yaml"}, Entries: stripEntries("app/pubspec.yaml", "app/build/o", "app/.dart_tool/p")},
			[]machine.DiscardedDir{flutter("app/.dart_tool", 10), flutter("app/build", 10)}},
		{"flutter beside an added pubspec", machine.ArchiveStripFacts{Entries: stripEntries("pubspec.yaml", "build/o")}, []machine.DiscardedDir{flutter("build", 10)}},
		{"build by name alone", machine.ArchiveStripFacts{Head: base, Entries: stripEntries("build/o", "x/.dart_tool/p")}, nil},
		{"HEAD holds a file below", machine.ArchiveStripFacts{Head: []string{"target/keep"}, Entries: stripEntries("target/keep", "target/.rustc_info.json")}, nil},
		{"HEAD holds the directory's path as a file", machine.ArchiveStripFacts{Head: []string{"app/pubspec.yaml", "app/build"}, Entries: stripEntries("app/pubspec.yaml", "app/build/o")}, nil},
		{"a nested repository below", machine.ArchiveStripFacts{Entries: stripEntries("target/.rustc_info.json"), Nested: []string{"target/dep"}}, nil},
		{"a link leading out", machine.ArchiveStripFacts{Entries: append(stripEntries("target/.rustc_info.json"), machine.ArchiveTreeEntry{Path: "target/debug/l", Mode: "120000", Size: 9}),
			LinkTargets: map[string]string{"target/debug/l": "../../src"}}, nil},
		{"a link staying inside", machine.ArchiveStripFacts{Entries: append(stripEntries("target/.rustc_info.json"), machine.ArchiveTreeEntry{Path: "target/debug/l", Mode: "120000", Size: 5}),
			LinkTargets: map[string]string{"target/debug/l": "../x"}}, []machine.DiscardedDir{cargo("target", 15)}},
		{"an absolute link", machine.ArchiveStripFacts{Entries: append(stripEntries("target/.rustc_info.json"), machine.ArchiveTreeEntry{Path: "target/l", Mode: "120000", Size: 4}),
			LinkTargets: map[string]string{"target/l": "/etc"}}, nil},
		{"a profile deep below, after its directory was seen", machine.ArchiveStripFacts{Head: base, Entries: stripEntries("crates/x/target/debug/app", "crates/x/target/debug/.fingerprint/a/b", "crates/x/src/lib.rs")},
			[]machine.DiscardedDir{cargo("crates/x/target", 20)}},
		{"a venv named build is no Flutter output", machine.ArchiveStripFacts{Head: []string{"pubspec.yaml"}, Entries: stripEntries("pubspec.yaml", "build/pyvenv.cfg", "build/lib/x")}, nil},
		{"a pubspec.yaml added below keeps the directory", machine.ArchiveStripFacts{Head: base, Entries: stripEntries("target/.rustc_info.json", "target/x/pubspec.yaml")}, nil},
		{"a CACHEDIR.TAG that is a directory disqualifies", machine.ArchiveStripFacts{Head: base, Entries: stripEntries("t/CACHEDIR.TAG/x", "t/.rustc_info.json")}, nil},
		{"a signed tag in node_modules is no Cargo target", machine.ArchiveStripFacts{Head: []string{"package-lock.json"}, Entries: stripEntries("node_modules/CACHEDIR.TAG", "node_modules/x"),
			SignedTags: []string{"node_modules/CACHEDIR.TAG"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, machine.PlanArchiveStrip(tt.f)); diff != "" {
				t.Errorf("PlanArchiveStrip (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStrippedManifest: the new tree, the new patch's digest and size,
// and the stripped directories added to build_output in path order.
func TestStrippedManifest(t *testing.T) {
	t.Parallel()
	m := machine.ArchiveManifest{WorktreeTree: "old", Files: []machine.ArchiveFile{{Name: "commits.bundle", SHA256: "b", Size: 1}, {Name: machine.ArchivePatchName, SHA256: "p", Size: 9}},
		BuildOutput: []machine.DiscardedDir{{Path: "node_modules", Kind: machine.BuildNodeModules, Bytes: 4}}}
	got := machine.StrippedManifest(m, []machine.DiscardedDir{{Path: "app/build", Kind: machine.BuildFlutterOutput, Bytes: 3}}, "new", nil, "q", 2)
	want := m
	want.WorktreeTree = "new"
	want.Files = []machine.ArchiveFile{{Name: "commits.bundle", SHA256: "b", Size: 1}, {Name: machine.ArchivePatchName, SHA256: "q", Size: 2}}
	want.BuildOutput = []machine.DiscardedDir{{Path: "app/build", Kind: machine.BuildFlutterOutput, Bytes: 3}, {Path: "node_modules", Kind: machine.BuildNodeModules, Bytes: 4}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("StrippedManifest (-want +got):\n%s", diff)
	}
	if m.Files[1].SHA256 != "p" || m.WorktreeTree != "old" {
		t.Errorf("StrippedManifest changed its argument: %+v", m)
	}
}
