package machine_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
)

// TestCaptureModes: each kind's most common mode is its default (the
// standard one on a tie with it), every other is named in path order, a
// file's setuid bit and a symbolic link are never recorded, and a
// directory keeps setgid and sticky.
func TestCaptureModes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		root    uint32
		entries []machine.ModeOf
		want    machine.ArchiveModes
	}{
		{"all standard", 0o755, []machine.ModeOf{{"a", "100644", 0o644}, {"b", "100755", 0o755}, {"d", "", 0o755}},
			machine.ArchiveModes{Root: "0755", File: "0644", Executable: "0755", Directory: "0755", Entries: []machine.ArchiveMode{}}},
		{"a deploy key and a private directory", 0o700, []machine.ModeOf{{"z/key", "100600", 0o600}, {"a", "100644", 0o644}, {"z", "", 0o700}, {"y", "", 0o755}},
			machine.ArchiveModes{Root: "0700", File: "0644", Executable: "0755", Directory: "0755",
				Entries: []machine.ArchiveMode{{"z", "0700"}, {"z/key", "0600"}}}},
		{"a group umask: the common mode is the default", 0o775, []machine.ModeOf{{"a", "100644", 0o664}, {"b", "100644", 0o664}, {"c", "100644", 0o644}, {"d", "", 0o775}},
			machine.ArchiveModes{Root: "0775", File: "0664", Executable: "0755", Directory: "0775", Entries: []machine.ArchiveMode{{"c", "0644"}}}},
		{"a tie with the standard keeps the standard", 0o755, []machine.ModeOf{{"a", "100644", 0o600}, {"b", "100644", 0o644}},
			machine.ArchiveModes{Root: "0755", File: "0644", Executable: "0755", Directory: "0755", Entries: []machine.ArchiveMode{{"a", "0600"}}}},
		{"a tie without the standard takes the lowest", 0o755, []machine.ModeOf{{"a", "100644", 0o660}, {"b", "100644", 0o600}},
			machine.ArchiveModes{Root: "0755", File: "0600", Executable: "0755", Directory: "0755", Entries: []machine.ArchiveMode{{"a", "0660"}}}},
		{"setgid and sticky directories; a setuid file loses the bit", 0o2755, []machine.ModeOf{{"s", "", 0o2775}, {"t", "", 0o1777}, {"d", "", 0o755}, {"e", "", 0o755}, {"u", "100755", 0o4755}},
			machine.ArchiveModes{Root: "2755", File: "0644", Executable: "0755", Directory: "0755",
				Entries: []machine.ArchiveMode{{"s", "2775"}, {"t", "1777"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := machine.CaptureModes(tc.root, tc.entries)
			if diff := cmp.Diff(tc.want, *got); diff != "" {
				t.Errorf("CaptureModes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCheckRestoreLayout: each way a tree, a manifest or an image would
// make a restore write elsewhere, or write what no restore writes, is
// named; a sound layout (a nested image with its .git, a mode for a
// directory only implied by its files) passes.
func TestCheckRestoreLayout(t *testing.T) {
	t.Parallel()
	f := func(p string) machine.ArchiveTreeEntry { return machine.ArchiveTreeEntry{Path: p, Mode: "100644"} }
	x := func(p string) machine.ArchiveTreeEntry { return machine.ArchiveTreeEntry{Path: p, Mode: "100755"} }
	l := func(p string) machine.ArchiveTreeEntry { return machine.ArchiveTreeEntry{Path: p, Mode: "120000"} }
	modes := func(es ...machine.ArchiveMode) *machine.ArchiveModes {
		return &machine.ArchiveModes{Root: "0755", File: "0644", Executable: "0755", Directory: "0755", Entries: es}
	}
	sound := map[string][]machine.ImageEntry{"vendor/n": {{".git", "dir", 0o2755}, {".git/HEAD", "file", 0o644}, {"l", "symlink", 0o777}}}
	for _, tc := range []struct {
		name   string
		tree   []machine.ArchiveTreeEntry
		m      machine.ArchiveManifest
		images map[string][]machine.ImageEntry
		want   string // "" for no refusal
	}{
		{"sound", []machine.ArchiveTreeEntry{f("a/b"), x("run"), l("link"), {Path: "sub", Mode: "160000"}},
			machine.ArchiveManifest{EmptyDirs: []string{"e/f"}, Nested: []machine.ArchiveNested{{Path: "vendor/n"}},
				Modes: modes(machine.ArchiveMode{"a", "0700"}, machine.ArchiveMode{"a/b", "0600"}, machine.ArchiveMode{"run", "0700"},
					machine.ArchiveMode{"vendor", "2775"}, machine.ArchiveMode{"vendor/n", "0700"}, machine.ArchiveMode{"e/f", "0700"}, machine.ArchiveMode{"sub", "0700"})},
			sound, ""},
		{"below a link of the tree", []machine.ArchiveTreeEntry{l("evil"), f("evil/d")}, machine.ArchiveManifest{}, nil,
			`"evil/d" lies below "evil", a symbolic link`},
		{"an empty directory below a link", []machine.ArchiveTreeEntry{l("evil")}, machine.ArchiveManifest{EmptyDirs: []string{"evil/a/b"}}, nil,
			`"evil/a/b" lies below "evil", a symbolic link`},
		{"a nested root below a link", []machine.ArchiveTreeEntry{l("evil")}, machine.ArchiveManifest{Nested: []machine.ArchiveNested{{Path: "evil/n"}}},
			map[string][]machine.ImageEntry{"evil/n": {{"f", "file", 0o644}}}, `"evil/n" lies below "evil", a symbolic link`},
		{"below a file", []machine.ArchiveTreeEntry{f("a"), f("a/b")}, machine.ArchiveManifest{}, nil, `"a/b" lies below "a", a file`},
		{"below a submodule's directory", []machine.ArchiveTreeEntry{{Path: "s", Mode: "160000"}, f("s/x")}, machine.ArchiveManifest{}, nil,
			`"s/x" lies below "s", a submodule directory`},
		{"inside an empty directory", []machine.ArchiveTreeEntry{f("e/x")}, machine.ArchiveManifest{EmptyDirs: []string{"e"}}, nil,
			`"e/x" lies below "e", a empty directory`},
		{"a tree file inside a nested repository", []machine.ArchiveTreeEntry{f("n/x")}, machine.ArchiveManifest{Nested: []machine.ArchiveNested{{Path: "n"}}},
			map[string][]machine.ImageEntry{"n": nil}, `"n/x" lies inside nested repository "n"`},
		{"twice in the tree", []machine.ArchiveTreeEntry{f("a"), x("a")}, machine.ArchiveManifest{}, nil, `"a" is named twice (file and executable file)`},
		{"a tree path with dot-dot", []machine.ArchiveTreeEntry{f("../x")}, machine.ArchiveManifest{}, nil, `its tree names "../x", which leaves the target`},
		{"an absolute tree path", []machine.ArchiveTreeEntry{f("/etc/x")}, machine.ArchiveManifest{}, nil, `its tree names "/etc/x"`},
		{"a .git in the tree", []machine.ArchiveTreeEntry{f(".GIT/config")}, machine.ArchiveManifest{}, nil, `its tree names ".GIT/config"`},
		{"a mode no restore writes", []machine.ArchiveTreeEntry{{Path: "d", Mode: "040000"}}, machine.ArchiveManifest{}, nil, `"d" with mode 040000`},
		{"an image entry that leaves", nil, machine.ArchiveManifest{Nested: []machine.ArchiveNested{{Path: "n"}}},
			map[string][]machine.ImageEntry{"n": {{"../x", "file", 0o644}}}, `the image of "n" names "../x", which leaves it`},
		{"an image entry below the image's link", nil, machine.ArchiveManifest{Nested: []machine.ArchiveNested{{Path: "n"}}},
			map[string][]machine.ImageEntry{"n": {{"l", "symlink", 0o777}, {"l/x", "file", 0o644}}}, `"n/l/x" lies below "n/l", a image symbolic link`},
		{"a device in an image", nil, machine.ArchiveManifest{Nested: []machine.ArchiveNested{{Path: "n"}}},
			map[string][]machine.ImageEntry{"n": {{"dev", "a block device", 0o600}}}, `holds "dev", a block device, which no restore writes`},
		{"a setuid file in an image", nil, machine.ArchiveManifest{Nested: []machine.ArchiveNested{{Path: "n"}}},
			map[string][]machine.ImageEntry{"n": {{"su", "file", 0o4755}}}, `gives "su" mode 4755`},
		{"an image entry twice", nil, machine.ArchiveManifest{Nested: []machine.ArchiveNested{{Path: "n"}}},
			map[string][]machine.ImageEntry{"n": {{"a", "file", 0o644}, {"a", "dir", 0o755}}}, `"n/a" is named twice (image file and image directory)`},
		{"an exec bit the tree lacks", []machine.ArchiveTreeEntry{f("a")}, machine.ArchiveManifest{Modes: modes(machine.ArchiveMode{"a", "0700"})}, nil,
			`modes give the file "a" mode 0700`},
		{"no exec bit where the tree has one", []machine.ArchiveTreeEntry{x("a")}, machine.ArchiveManifest{Modes: modes(machine.ArchiveMode{"a", "0600"})}, nil,
			`modes give the executable file "a" mode 0600`},
		{"setgid on a file", []machine.ArchiveTreeEntry{x("a")}, machine.ArchiveManifest{Modes: modes(machine.ArchiveMode{"a", "2755"})}, nil,
			`modes give the executable file "a" mode 2755`},
		{"a mode for a link", []machine.ArchiveTreeEntry{l("a")}, machine.ArchiveManifest{Modes: modes(machine.ArchiveMode{"a", "0700"})}, nil,
			`modes name "a", a symbolic link`},
		{"a mode for nothing", []machine.ArchiveTreeEntry{f("a")}, machine.ArchiveManifest{Modes: modes(machine.ArchiveMode{"b", "0700"})}, nil,
			`modes name "b", which the tree does not hold`},
		{"three problems and more", []machine.ArchiveTreeEntry{l("a"), f("a/1"), f("a/2"), f("a/3"), f("a/4")}, machine.ArchiveManifest{}, nil,
			`and 1 more`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.m.ID = "x-1"
			r := machine.CheckRestoreLayout("/archives/x-1", tc.m, tc.tree, tc.images)
			switch {
			case tc.want == "" && r != nil:
				t.Errorf("refused a sound layout: %v", r)
			case tc.want != "" && r == nil:
				t.Errorf("no refusal, want one naming %s", tc.want)
			case r != nil && (r.Code != machine.CodeArchiveInvalid || !strings.Contains(r.Message, tc.want) || strings.Contains(r.Message, "\n")):
				t.Errorf("refusal %s %q, want archive-invalid, one line, naming %s", r.Code, r.Message, tc.want)
			}
		})
	}
	// Before the tree is known, the modes are not judged (they name its
	// files), but the manifest and the images are.
	if r := machine.CheckRestoreLayout("/a", machine.ArchiveManifest{Modes: modes(machine.ArchiveMode{"a", "0600"})}, nil, nil); r != nil {
		t.Errorf("modes judged without the tree: %v", r)
	}
}

// TestParseArchiveManifestLayout: a manifest that names a path twice, a
// path inside another it names, or modes that do not parse is invalid
// when it is read (verify says so too); one without modes is an archive
// from before they were recorded and reads as such.
func TestParseArchiveManifestLayout(t *testing.T) {
	t.Parallel()
	base := func() map[string]any {
		return map[string]any{"format": machine.ArchiveFormat, "id": "x-1", "head": "h", "worktree_tree": "t",
			"files": []any{map[string]any{"name": "nested-1.tar", "sha256": "s", "size": 1}}}
	}
	okModes := map[string]any{"root": "0755", "file": "0644", "executable": "0755", "directory": "0755", "entries": []any{}}
	for _, tc := range []struct {
		name string
		edit func(m map[string]any)
		want string
	}{
		{"without modes", func(m map[string]any) {}, ""},
		{"with modes", func(m map[string]any) { m["modes"] = okModes }, ""},
		{"an empty directory twice", func(m map[string]any) { m["empty_dirs"] = []string{"d", "d"} }, `"d" is named twice`},
		{"a nested root that is an empty directory", func(m map[string]any) {
			m["nested"] = []any{map[string]any{"path": "d", "image": "nested-1.tar"}}
			m["empty_dirs"] = []string{"d"}
		}, `"d" is named twice (nested repository and empty directory)`},
		{"a nested root inside another", func(m map[string]any) {
			m["nested"] = []any{map[string]any{"path": "n", "image": "nested-1.tar"}, map[string]any{"path": "n/m", "image": "nested-1.tar"}}
		}, `"n/m" lies inside nested repository "n"`},
		{"an empty directory inside an empty directory", func(m map[string]any) { m["empty_dirs"] = []string{"e", "e/f"} }, `"e/f" lies inside empty directory "e"`},
		{"a mode of three digits", func(m map[string]any) {
			m["modes"] = map[string]any{"root": "755", "file": "0644", "executable": "0755", "directory": "0755", "entries": []any{}}
		}, `root mode "755"`},
		{"a file default with the exec bit", func(m map[string]any) {
			m["modes"] = map[string]any{"root": "0755", "file": "0755", "executable": "0755", "directory": "0755", "entries": []any{}}
		}, `file mode "0755"`},
		{"a mode entry twice", func(m map[string]any) {
			m["modes"] = map[string]any{"root": "0755", "file": "0644", "executable": "0755", "directory": "0755",
				"entries": []any{map[string]any{"path": "a", "mode": "0600"}, map[string]any{"path": "a", "mode": "0640"}}}
		}, `modes: "a" is named twice`},
		{"a mode entry that leaves", func(m map[string]any) {
			m["modes"] = map[string]any{"root": "0755", "file": "0644", "executable": "0755", "directory": "0755",
				"entries": []any{map[string]any{"path": "../a", "mode": "0600"}}}
		}, `modes: "../a" leaves the tree`},
		{"a setuid mode entry", func(m map[string]any) {
			m["modes"] = map[string]any{"root": "0755", "file": "0644", "executable": "0755", "directory": "0755",
				"entries": []any{map[string]any{"path": "a", "mode": "4755"}}}
		}, `modes: "a" has mode "4755"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := base()
			tc.edit(m)
			b, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			got, r := machine.ParseArchiveManifest("/a", b)
			switch {
			case tc.want == "" && r != nil:
				t.Errorf("refused: %v", r)
			case tc.want == "" && tc.name == "without modes" && got.Modes != nil:
				t.Errorf("a manifest without modes reads with %+v", got.Modes)
			case tc.want != "" && (r == nil || r.Code != machine.CodeArchiveInvalid || !strings.Contains(r.Message, tc.want)):
				t.Errorf("ParseArchiveManifest = %v, want archive-invalid naming %s", r, tc.want)
			}
		})
	}
}

// TestModesWithin: a strip keeps the modes of the files it keeps and of
// the directories a restore still makes, and nothing of what it left out.
func TestModesWithin(t *testing.T) {
	t.Parallel()
	ms := &machine.ArchiveModes{Root: "0700", File: "0644", Executable: "0755", Directory: "0755", Entries: []machine.ArchiveMode{
		{"app", "0700"}, {"app/build", "0700"}, {"app/build/out.bin", "0600"}, {"app/src/key", "0600"},
		{"only-build", "0700"}, {"only-build/target", "0700"}, {"e", "0700"}, {"n", "2775"}}}
	got := ms.Within([]string{"app/src/key", "README"}, []string{"e"}, []string{"n"})
	want := &machine.ArchiveModes{Root: "0700", File: "0644", Executable: "0755", Directory: "0755", Entries: []machine.ArchiveMode{
		{"app", "0700"}, {"app/src/key", "0600"}, {"e", "0700"}, {"n", "2775"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Within (-want +got):\n%s", diff)
	}
	if len(ms.Entries) != 8 {
		t.Errorf("Within changed its receiver: %+v", ms.Entries)
	}
	var none *machine.ArchiveModes
	if none.Within([]string{"a"}, nil, nil) != nil {
		t.Error("an archive without modes gained some")
	}
}

// TestCheckArchiveFreshModes: a change of permission bits makes an
// archive that records them stale, naming the path; an archive that
// records none compares no bits.
func TestCheckArchiveFreshModes(t *testing.T) {
	t.Parallel()
	ms := func(root string, es ...machine.ArchiveMode) *machine.ArchiveModes {
		return &machine.ArchiveModes{Root: root, File: "0644", Executable: "0755", Directory: "0755", Entries: es}
	}
	m := machine.ArchiveManifest{ID: "x-1", Path: "/t", Head: "h", WorktreeTree: "t", Modes: ms("0755", machine.ArchiveMode{".env", "0600"})}
	now := machine.ArchiveFingerprint{Head: "h", WorktreeTree: "t", Nested: map[string]string{}}
	for _, tc := range []struct {
		name  string
		modes *machine.ArchiveModes
		want  string
	}{
		{"equal", ms("0755", machine.ArchiveMode{".env", "0600"}), ""},
		{"a file opened up", ms("0755"), "the permission bits of .env are its kind's now, the archive holds 0600"},
		{"another file closed", ms("0755", machine.ArchiveMode{".env", "0600"}, machine.ArchiveMode{"a", "0600"}), "the permission bits of a are 0600 now"},
		{"the root", ms("0700", machine.ArchiveMode{".env", "0600"}), "the tree's own directory are 0700 now"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now.Modes = tc.modes
			r := machine.CheckArchiveFresh(m, now)
			if tc.want == "" && r != nil || tc.want != "" && (r == nil || r.Code != machine.CodeArchiveStale || !strings.Contains(r.Message, tc.want)) {
				t.Errorf("CheckArchiveFresh = %v, want %q", r, tc.want)
			}
		})
	}
	old := m
	old.Modes = nil
	now.Modes = ms("0700")
	if r := machine.CheckArchiveFresh(old, now); r != nil {
		t.Errorf("an archive without modes compared them: %v", r)
	}
}
