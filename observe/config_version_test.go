package observe

// custody.toml's version and discern's keys (issue 27): a newer version is
// refused with the version custody reads, each legacy key is refused
// naming what replaced it, and UpgradeConfig rewrites only those keys.

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
)

func TestConfigVersion(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"", "version = 1\n", "version = 1\n" + cfgRes("db")} {
		if _, err := ParseConfig(cfgName, []byte(ok), "shop"); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	// A newer version is refused before its keys are read: version 2 may
	// hold keys this custody does not know.
	_, err := ParseConfig(cfgName, []byte("version = 2\n[future]\nkey = 1\n"), "shop")
	var newer *ConfigNewerError
	if !errors.As(err, &newer) || newer.Version != 2 || newer.Path != cfgName || !errors.Is(err, ErrConfig) {
		t.Fatalf("version 2: %v, want a ConfigNewerError wrapping ErrConfig", err)
	}
	r := machine.ConfigNewerRefusal(newer.Path, newer.Version, "v9.9.9")
	want := "/work/repo/custody.toml declares version = 2, which custody v9.9.9 does not read (it reads version 1): only a custody whose `custody config upgrade` writes version 2 reads it; nothing was changed, upgrade custody"
	if r.Message != want || r.Code != machine.CodeConfigInvalid || r.Retry != "custody --version" || r.Path != cfgName {
		t.Errorf("refusal = %+v, want message %q", r, want)
	}
	for in, msg := range map[string]string{
		"version = 0\n":     "line 1: version: 0 is not a version of custody.toml (1 to 1)",
		"version = -3\n":    "line 1: version: -3 is not a version of custody.toml (1 to 1)",
		"version = \"1\"\n": `line 1 (last key "version"): incompatible types: TOML value has type string; destination has type integer`,
	} {
		_, err := ParseConfig(cfgName, []byte(in), "shop")
		if err == nil || !strings.Contains(err.Error(), msg) || !errors.Is(err, ErrConfig) {
			t.Errorf("%q: %v, want %q", in, err, msg)
		}
	}
}

// TestConfigLegacyKeys: each key discern wrote is refused naming what
// replaced it, whichever way the file writes it, with the upgrade as retry.
func TestConfigLegacyKeys(t *testing.T) {
	t.Parallel()
	db := "[worktree.db] is discern's; custody reads a resource: [resources.db] with create (was clone) and destroy (was drop) (custody config upgrade rewrites it)"
	dev := "[worktree.dev_server] is discern's; custody reads a resource: [resources.dev_server] with create (was link) and destroy (was unlink) (custody config upgrade rewrites it)"
	res := "[worktree.resources] is discern's; custody reads [resources.<name>], the same keys one level up (custody config upgrade rewrites it)"
	port := "[worktree] port is discern's; custody reads [worktree] port_base (with port_span: @port@ is port_base + hash(id) mod port_span) (custody config upgrade rewrites it)"
	cases := []struct{ in, msg string }{
		{"[worktree.db]\nclone = \"createdb @db@\"\ndrop = \"dropdb @db@\"\n", "line 1: " + db},
		{"# the database\n\n[worktree]\nroot = \".wt\"\n\n[worktree.db]\nclone = \"x\"\n", "line 6: " + db},
		{"[worktree]\ndb = { clone = \"x\", drop = \"y\" }\n", "line 2: " + db},
		{"worktree.db.clone = \"x\"\n", "line 1: " + db},
		{"[worktree.dev_server]\nlink = \"ln -s . @site@\"\nunlink = \"rm @site@\"\n", "line 1: " + dev},
		{"[worktree.resources.emulator]\ncreate = \"boot\"\ndestroy = \"halt\"\n", "line 1: " + res},
		{"[worktree]\nport = 3000\n", "line 2: " + port},
		// the first in document order is named
		{"[worktree]\nport = 3000\n[worktree.db]\nclone = \"x\"\n", "line 2: " + port},
	}
	for _, c := range cases {
		_, err := ParseConfig(cfgName, []byte(c.in), "shop")
		var r *machine.Refusal
		if !errors.As(err, &r) || !errors.Is(err, ErrConfig) {
			t.Errorf("%q: %v, want a refusal wrapping ErrConfig", c.in, err)
			continue
		}
		want := machine.Refusal{Code: machine.CodeConfigInvalid, Path: cfgName, Retry: "custody config upgrade", Message: cfgName + ": " + c.msg}
		if diff := cmp.Diff(want, *r); diff != "" {
			t.Errorf("%q (-want +got):\n%s", c.in, diff)
		}
		if got := err.Error(); got != "invalid project configuration: "+want.Message {
			t.Errorf("%q: Error() = %q", c.in, got)
		}
	}
}

func TestUpgradeConfig(t *testing.T) {
	t.Parallel()
	discern := `# shop's worktrees
# (moved from discern.toml)

[worktree]
root = ".worktrees"   # the managed root
port = 3000           # discern's base port

# one database per worktree
[worktree.db]
clone = "createdb -T shop_template @db@"   # from the template
drop = "dropdb --if-exists @db@"

[worktree.dev_server]
link = "ln -sfn @dir@ ~/sites/@site@"
unlink = "rm -f ~/sites/@site@"

[worktree.resources."emulator"]
create = "emu boot @worktree@"
destroy = "emu halt @worktree@"
gc = false
`
	upgraded := `# shop's worktrees
# (moved from discern.toml)

version = 1

[worktree]
root = ".worktrees"   # the managed root
port_base = 3000           # discern's base port

# one database per worktree
[resources.db]
create = "createdb -T shop_template @db@"   # from the template
destroy = "dropdb --if-exists @db@"

[resources.dev_server]
create = "ln -sfn @dir@ ~/sites/@site@"
destroy = "rm -f ~/sites/@site@"

[resources.emulator]
create = "emu boot @worktree@"
destroy = "emu halt @worktree@"
gc = false
`
	cases := []struct {
		name, in, want string
		changes        []string
	}{
		{name: "discern", in: discern, want: upgraded, changes: []string{
			"line 4: version = 1 added",
			"line 6: port -> port_base",
			"line 9: worktree.db -> resources.db",
			"line 10: clone -> create",
			"line 11: drop -> destroy",
			"line 13: worktree.dev_server -> resources.dev_server",
			"line 14: link -> create",
			"line 15: unlink -> destroy",
			`line 17: worktree.resources."emulator" -> resources.emulator`,
		}},
		{name: "current", in: "version = 1\n" + cfgRes("db"), want: "version = 1\n" + cfgRes("db")},
		{name: "no version", in: cfgRes("db"), want: "version = 1\n\n" + cfgRes("db"), changes: []string{"line 1: version = 1 added"}},
		{name: "empty", in: "", want: "version = 1\n", changes: []string{"line 1: version = 1 added"}},
		{name: "comments only", in: "# nothing yet", want: "# nothing yet\nversion = 1\n", changes: []string{"line 1: version = 1 added"}},
		{name: "dotted", in: "worktree.db.clone = \"a\"\nworktree.db.drop = \"b\"\n",
			want:    "version = 1\n\nresources.db.create = \"a\"\nresources.db.destroy = \"b\"\n",
			changes: []string{"line 1: version = 1 added", `line 1: worktree.db.clone -> resources.db.create`, `line 2: worktree.db.drop -> resources.db.destroy`}},
		{name: "crlf", in: "[worktree.db]\r\nclone = \"a\"\r\ndrop = \"b\"\r\n", want: "version = 1\r\n\r\n[resources.db]\r\ncreate = \"a\"\r\ndestroy = \"b\"\r\n",
			changes: []string{"line 1: version = 1 added", "line 1: worktree.db -> resources.db", "line 2: clone -> create", "line 3: drop -> destroy"}},
		{name: "byte order mark", in: "\uFEFF[worktree.db]\nclone = \"a\"\ndrop = \"b\"\n", want: "\uFEFFversion = 1\n\n[resources.db]\ncreate = \"a\"\ndestroy = \"b\"\n",
			changes: []string{"line 1: version = 1 added", "line 1: worktree.db -> resources.db", "line 2: clone -> create", "line 3: drop -> destroy"}},
	}
	for _, c := range cases {
		got, err := UpgradeConfig(cfgName, []byte(c.in))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if diff := cmp.Diff(c.want, string(got.New)); diff != "" {
			t.Errorf("%s: (-want +got):\n%s", c.name, diff)
		}
		if diff := cmp.Diff(c.changes, got.Changes); diff != "" {
			t.Errorf("%s: changes (-want +got):\n%s", c.name, diff)
		}
		if _, err := ParseConfig(cfgName, got.New, "shop"); err != nil {
			t.Errorf("%s: the upgraded file: %v", c.name, err)
		}
	}
}

func TestUpgradeConfigRefused(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, in, msg string }{
		{"inside its parent", "[worktree]\ndb.clone = \"x\"\n",
			"line 2: db.clone is written inside [worktree], where its replacement resources.db.create cannot be: write it as its own [worktree.db] table first"},
		{"inline inside its parent", "[worktree]\ndb = { clone = \"x\", drop = \"y\" }\n",
			"line 2: db is written inside [worktree], where its replacement resources.db cannot be"},
		{"no counterpart", "[worktree.db]\nclone = \"x\"\ndrop = \"y\"\ntemplate = \"t\"\n",
			"line 4: worktree.db.template has no counterpart in custody's [resources.db]"},
		{"still invalid", "[worktree.db]\nclone = \"x\"\ndrop = \"y\"\n[worktree]\nbranch_prefx = \"x/\"\n",
			"the file so rewritten would still not be valid (in the rewritten file, line 7: unknown key \"worktree.branch_prefx\"); fix it by hand"},
		{"two to one", "[worktree.db]\nclone = \"x\"\ndrop = \"y\"\n[worktree.resources.db]\ncreate = \"x\"\ndestroy = \"y\"\n",
			"would still not be valid"},
		{"syntax", "[worktree.db\n", "line 1"},
	}
	for _, c := range cases {
		got, err := UpgradeConfig(cfgName, []byte(c.in))
		if err == nil || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %q, %v; want an error holding %q", c.name, got.New, err, c.msg)
		}
	}
	var newer *ConfigNewerError
	if _, err := UpgradeConfig(cfgName, []byte("version = 3\n[worktree.db]\n")); !errors.As(err, &newer) || newer.Version != 3 {
		t.Errorf("version 3: %v, want ConfigNewerError", err)
	}
}

// FuzzUpgradeConfig: the upgrade never panics; a file it rewrites parses,
// has its old lines in place but for those it inserted, and upgrading it
// again changes nothing.
func FuzzUpgradeConfig(f *testing.F) {
	for _, s := range []string{
		"",
		"# only a comment",
		"version = 1\n" + cfgRes("db"),
		"[worktree.db]\nclone = \"a\"\ndrop = \"b\"\n",
		"# c\n\n[worktree]\nport = 3000 # p\n[worktree.dev_server] # d\nlink = 'a'\nunlink = 'b'\n",
		"worktree.db.clone = \"a\"\nworktree.db.drop = \"b\"\n",
		"[worktree.resources.\"e m\"]\ncreate = \"a\"\ndestroy = \"b\"\n",
		"[worktree]\ndb = { clone = \"a\", drop = \"b\" }\n",
		"\uFEFF[ worktree . db ]\r\nclone = \"a\"\r\ndrop = \"b\"\r\n",
		"version = 7\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		up, err := UpgradeConfig(cfgName, []byte(doc))
		if err != nil {
			if !errors.Is(err, ErrConfig) || strings.ContainsAny(err.Error(), "\r\n") {
				t.Fatalf("error %q is not one line of ErrConfig", err)
			}
			return
		}
		if _, err := ParseConfig(cfgName, up.New, "repo"); err != nil {
			t.Fatalf("the upgrade of %q is not valid: %v", doc, err)
		}
		oldLines, newLines := strings.Count(doc, "\n"), strings.Count(string(up.New), "\n")
		if string(up.New) != doc && newLines-oldLines != up.Inserted && newLines-oldLines != up.Inserted+1 {
			t.Fatalf("%d lines became %d, but %d were inserted", oldLines, newLines, up.Inserted)
		}
		again, err := UpgradeConfig(cfgName, up.New)
		if err != nil || string(again.New) != string(up.New) || len(again.Changes) != 0 {
			t.Fatalf("upgrading %q again: %q, %v, %v", up.New, again.New, again.Changes, err)
		}
	})
}
