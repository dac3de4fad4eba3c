package observe_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
)

// TestStripAgreesWithTreeOnDisk: one classifier decides build output for a
// tree on disk and for an archive's tree. The same files, written to disk
// (observe.BuildShape, then machine.StructureKind) and given as an
// archive's tree (machine.PlanArchiveStrip), give the same Cargo and
// Flutter verdicts; a kind a strip does not take is never stripped.
func TestStripAgreesWithTreeOnDisk(t *testing.T) {
	t.Parallel()
	signed := machine.CacheDirSignature + "\n# made by cargo\n"
	tests := []struct {
		name  string
		head  []string
		files map[string]string
		cand  string
		want  machine.BuildKind // what the tree on disk is
	}{
		{"rustc info", []string{"Cargo.toml"}, map[string]string{"Cargo.toml": "", "target/.rustc_info.json": "{}"}, "target", machine.BuildCargoTarget},
		{"profile", []string{"Cargo.toml"}, map[string]string{"Cargo.toml": "", "target/debug/.fingerprint/a/b": "x"}, "target", machine.BuildCargoTarget},
		{"unsigned tag", nil, map[string]string{"t/CACHEDIR.TAG": "nope", "t/.rustc_info.json": "{}"}, "t", machine.BuildNone},
		{"signed tag and rustc info", nil, map[string]string{"t/CACHEDIR.TAG": signed, "t/.rustc_info.json": "{}"}, "t", machine.BuildCargoTarget},
		{"flutter build", []string{"app/pubspec.yaml"}, map[string]string{"app/pubspec.yaml": "", "app/build/o": "x"}, "app/build", machine.BuildFlutterOutput},
		{"dart tool", []string{"app/pubspec.yaml"}, map[string]string{"app/pubspec.yaml": "", "app/.dart_tool/p": "x"}, "app/.dart_tool", machine.BuildFlutterOutput},
		{"build by name alone", []string{"README"}, map[string]string{"README": "", "build/o": "x"}, "build", machine.BuildNone},
		{"a venv named build beside a pubspec", []string{"pubspec.yaml"}, map[string]string{"pubspec.yaml": "", "build/pyvenv.cfg": "home = /usr/bin\n"}, "build", machine.BuildPythonVenv},
		{"node_modules beside a lockfile", []string{"package-lock.json"}, map[string]string{"package-lock.json": "", "node_modules/x/i.js": ""}, "node_modules", machine.BuildNodeModules},
		{"rustc info in node_modules", []string{"package-lock.json"}, map[string]string{"package-lock.json": "", "node_modules/.rustc_info.json": "{}"}, "node_modules", machine.BuildCargoTarget},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			var ents []machine.ArchiveTreeEntry
			var tags []string
			for p, content := range tt.files {
				full := filepath.Join(root, filepath.FromSlash(p))
				if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
				ents = append(ents, machine.ArchiveTreeEntry{Path: p, Mode: "100644", Size: int64(len(content))})
				if filepath.Base(p) == "CACHEDIR.TAG" && strings.HasPrefix(content, machine.CacheDirSignature) {
					tags = append(tags, p)
				}
			}
			tracked := machine.TrackedPaths(tt.head)
			live := machine.StructureKind(observe.BuildShape(root, tt.cand), tracked, machine.Patterns{})
			if live != tt.want {
				t.Fatalf("the tree on disk: %s is %q, want %q", tt.cand, live, tt.want)
			}
			want := machine.BuildNone
			if live == machine.BuildCargoTarget || live == machine.BuildFlutterOutput {
				want = live
			}
			got := machine.BuildNone
			plan := machine.PlanArchiveStrip(machine.ArchiveStripFacts{Head: tt.head, Entries: ents, SignedTags: tags})
			if i := slices.IndexFunc(plan, func(d machine.DiscardedDir) bool { return d.Path == tt.cand }); i >= 0 {
				got = plan[i].Kind
			}
			if got != want {
				t.Errorf("the archive's tree: %s is stripped as %q, the tree on disk's rules say %q (plan %+v)", tt.cand, got, want, plan)
			}
		})
	}
}
