package observe

// custody.toml (issue 4): defaults, document order, and errors that name
// the file, the line and the key. Helpers carry the prefix cfg.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
)

const cfgName = "/work/repo/custody.toml"

// cfgRes is the [resources.<name>] table every test starts from.
func cfgRes(name string, extra ...string) string {
	return fmt.Sprintf("[resources.%s]\ncreate = \"mk %s\"\ndestroy = \"rm %s\"\n%s", name, name, name, strings.Join(extra, ""))
}

// cfgSpec is the spec cfgRes declares with every default.
func cfgSpec(name string) machine.ResourceSpec {
	return machine.ResourceSpec{Name: name, Create: "mk " + name, Destroy: "rm " + name, Required: true, GC: true,
		Timeout: machine.DefaultResourceTimeout}
}

func cfgDefaults(slug string, rs ...machine.ResourceSpec) machine.Config {
	return machine.Config{Slug: slug, PortBase: machine.DefaultPortBase, PortSpan: machine.DefaultPortSpan, Resources: rs}
}

func TestConfigParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, doc, dir string
		want           machine.Config
	}{
		{"empty/nil", "", "repo", cfgDefaults("repo")},
		{"empty/comments", "# nothing here\n\n", "repo", cfgDefaults("repo")},
		{"slug/from-dir-sanitized", "", "My Repo.git", cfgDefaults("my-repo-git")},
		{"slug/from-dir-unusable", "", "日本", cfgDefaults("project")},
		{"slug/declared", "[project]\nslug = \"Shop API\"\n", "repo", cfgDefaults("shop-api")},
		{"slug/empty-is-default", "[project]\nslug = \"\"\n", "checkout", cfgDefaults("checkout")},
		{"empty-resources-table", "[resources]\n", "repo", cfgDefaults("repo")},
		{"resource/defaults", cfgRes("db"), "repo", cfgDefaults("repo", cfgSpec("db"))},
		{"resource/everything", cfgRes("dev-server", "ensure = \"ping\"\nrequired = false\nretries = 2\ngc = false\ntimeout = \"90s\"\n"), "repo",
			cfgDefaults("repo", machine.ResourceSpec{Name: "dev-server", Create: "mk dev-server", Destroy: "rm dev-server", Ensure: "ping",
				Retries: 2, Timeout: 90 * time.Second})},
		{"resource/limits", cfgRes("a_1", "retries = 10\ntimeout = \"1ns\"\n"), "repo",
			cfgDefaults("repo", machine.ResourceSpec{Name: "a_1", Create: "mk a_1", Destroy: "rm a_1", Required: true, GC: true, Retries: 10, Timeout: 1})},
		{"resource/inline-table", "[resources]\ndb = { create = \"mk db\", destroy = \"rm db\" }\n", "repo", cfgDefaults("repo", cfgSpec("db"))},
		{"order/document-not-alphabetical", cfgRes("zz") + cfgRes("aa"), "repo", cfgDefaults("repo", cfgSpec("zz"), cfgSpec("aa"))},
		{"order/three", cfgRes("m") + "[project]\nslug = \"p\"\n" + cfgRes("z") + cfgRes("a"), "repo",
			cfgDefaults("p", cfgSpec("m"), cfgSpec("z"), cfgSpec("a"))},
		{"worktree/values", "[worktree]\nroot = \"trees/here\"\nbranch_prefix = \"wt/\"\nport_base = 1024\nport_span = 64512\n", "repo",
			machine.Config{Slug: "repo", Root: "trees/here", BranchPrefix: "wt/", PortBase: 1024, PortSpan: 64512}},
		{"worktree/absolute-root", "[worktree]\nroot = \"/srv/trees\"\nport_base = 65535\nport_span = 1\n", "repo",
			machine.Config{Slug: "repo", Root: "/srv/trees", PortBase: 65535, PortSpan: 1}},
		{"worktree/dotted-names-are-fine", "[worktree]\nroot = \"..trees/a..b\"\n", "repo",
			machine.Config{Slug: "repo", Root: "..trees/a..b", PortBase: machine.DefaultPortBase, PortSpan: machine.DefaultPortSpan}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var b []byte
			if tt.doc != "" {
				b = []byte(tt.doc)
			}
			got, err := ParseConfig(cfgName, b, tt.dir)
			if err != nil {
				t.Fatalf("ParseConfig:\n%s\n= %v", tt.doc, err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("ParseConfig:\n%s\n(-want +got):\n%s", tt.doc, d)
			}
		})
	}
}

// TestConfigErrors: every refusal is ErrConfig and names the file, the
// line and the key.
func TestConfigErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, doc string
		line      int
		key       string
		words     []string
	}{
		{name: "unknown/top-level-key", doc: "slug = \"x\"\n", line: 1, key: "slug"},
		{name: "unknown/top-level-table", doc: "[project]\nslug = \"x\"\n\n[worktrees]\nroot = \"x\"\n", line: 4, key: "worktrees"},
		{name: "unknown/project-key", doc: "[project]\nslug = \"x\"\nname = \"y\"\n", line: 3, key: "project.name"},
		{name: "unknown/worktree-key", doc: "[worktree]\nprot_base = 3000\n", line: 2, key: "worktree.prot_base"},
		{name: "unknown/resource-key", doc: cfgRes("db", "requried = false\n"), line: 4, key: "resources.db.requried"},
		{name: "unknown/second-resource-key", doc: cfgRes("db") + cfgRes("cache", "bogus = 1\n"), line: 7, key: "resources.cache.bogus"},

		{name: "type/retries-string", doc: cfgRes("db", "retries = \"two\"\n"), line: 4, key: "resources.db.retries"},
		{name: "type/retries-float", doc: cfgRes("db", "retries = 1.5\n"), line: 4, key: "resources.db.retries"},
		{name: "type/required-string", doc: cfgRes("db", "required = \"yes\"\n"), line: 4, key: "resources.db.required"},
		{name: "type/gc-int", doc: cfgRes("db", "gc = 0\n"), line: 4, key: "resources.db.gc"},
		{name: "type/timeout-int", doc: cfgRes("db", "timeout = 300\n"), line: 4, key: "resources.db.timeout"},
		{name: "type/create-array", doc: "[resources.db]\ncreate = [\"mk\"]\ndestroy = \"rm\"\n", line: 2, key: "resources.db.create"},
		{name: "type/slug-int", doc: "[project]\nslug = 1\n", line: 2, key: "project.slug"},
		{name: "type/port-string", doc: "[worktree]\nport_base = \"20000\"\n", line: 2, key: "worktree.port_base"},
		{name: "type/project-not-table", doc: "project = \"x\"\n", line: 1, key: "project"},

		{name: "timeout/not-duration", doc: cfgRes("db", "timeout = \"soon\"\n"), line: 4, key: "resources.db.timeout", words: []string{"soon"}},
		{name: "timeout/no-unit", doc: cfgRes("db", "timeout = \"300\"\n"), line: 4, key: "resources.db.timeout"},
		{name: "timeout/negative", doc: cfgRes("db", "timeout = \"-1s\"\n"), line: 4, key: "resources.db.timeout"},
		{name: "timeout/zero", doc: cfgRes("db", "timeout = \"0s\"\n"), line: 4, key: "resources.db.timeout"},
		{name: "retries/negative", doc: cfgRes("db", "retries = -1\n"), line: 4, key: "resources.db.retries", words: []string{"-1"}},
		{name: "retries/too-many", doc: cfgRes("db", "retries = 11\n"), line: 4, key: "resources.db.retries"},

		{name: "missing/create", doc: "[resources.db]\ndestroy = \"rm\"\n", line: 1, key: "resources.db", words: []string{"create"}},
		{name: "missing/destroy", doc: "[resources.db]\ncreate = \"mk\"\n", line: 1, key: "resources.db", words: []string{"destroy"}},
		{name: "missing/blank-create", doc: "[resources.db]\ncreate = \"  \"\ndestroy = \"rm\"\n", line: 1, key: "resources.db", words: []string{"create"}},
		{name: "missing/second-table", doc: cfgRes("db") + "\n[resources.cache]\ncreate = \"mk\"\n", line: 5, key: "resources.cache", words: []string{"destroy"}},

		{name: "name/upper", doc: cfgRes("Db"), line: 1, key: "resources.Db"},
		{name: "name/digit-first", doc: cfgRes("1db"), line: 1, key: "resources.1db"},
		{name: "name/too-long", doc: cfgRes(strings.Repeat("a", 33)), line: 1, key: "resources." + strings.Repeat("a", 33)},

		{name: "branch-prefix/dotdot", doc: "[worktree]\nbranch_prefix = \"a..b/\"\n", line: 2, key: "worktree.branch_prefix"},
		{name: "branch-prefix/dash", doc: "[worktree]\nbranch_prefix = \"-x/\"\n", line: 2, key: "worktree.branch_prefix"},
		{name: "branch-prefix/lock", doc: "[worktree]\nbranch_prefix = \"x.lock\"\n", line: 2, key: "worktree.branch_prefix"},
		{name: "branch-prefix/space", doc: "[worktree]\n\nbranch_prefix = \"a b/\"\n", line: 3, key: "worktree.branch_prefix"},
		{name: "branch-prefix/colon", doc: "[worktree]\nbranch_prefix = \"a:b/\"\n", line: 2, key: "worktree.branch_prefix"},

		{name: "root/dotdot", doc: "[worktree]\nroot = \"../trees\"\n", line: 2, key: "worktree.root", words: []string{".."}},
		{name: "root/inner-dotdot", doc: "[worktree]\nroot = \"a/../../b\"\n", line: 2, key: "worktree.root"},
		{name: "root/absolute-dotdot", doc: "[worktree]\nroot = \"/srv/x/..\"\n", line: 2, key: "worktree.root"},

		{name: "port/base-low", doc: "[worktree]\nport_base = 80\n", line: 2, key: "worktree.port_base", words: []string{"80"}},
		{name: "port/base-high", doc: "[worktree]\nport_base = 70000\n", line: 2, key: "worktree.port_base"},
		{name: "port/span-zero", doc: "[worktree]\nport_span = 0\n", line: 2, key: "worktree.port_span"},
		{name: "port/span-overflow", doc: "[worktree]\nport_base = 65000\nport_span = 1000\n", line: 3, key: "worktree.port_span"},

		{name: "syntax/unterminated-string", doc: "[project]\nslug = \"x\n", line: 2, key: "project.slug"},
		{name: "syntax/double-equals", doc: "[worktree]\nroot = = \"x\"\n", line: 2, key: "worktree.root"},
		{name: "syntax/duplicate-key", doc: cfgRes("db", "create = \"again\"\n"), line: 4, key: "resources.db.create"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfgWantError(t, tt.doc, tt.line, tt.key, tt.words...)
		})
	}
}

func cfgWantError(t *testing.T, doc string, line int, key string, words ...string) {
	t.Helper()
	c, err := ParseConfig(cfgName, []byte(doc), "repo")
	if err == nil {
		t.Fatalf("ParseConfig accepted:\n%s\n= %+v", doc, c)
	}
	if !errors.Is(err, ErrConfig) {
		t.Errorf("error %v is not ErrConfig", err)
	}
	msg := err.Error()
	for _, w := range append([]string{cfgName, fmt.Sprintf("line %d", line), key}, words...) {
		if !strings.Contains(msg, w) {
			t.Errorf("error for\n%s\ndoes not name %q:\n%s", doc, w, msg)
		}
	}
	if d := cmp.Diff(machine.Config{}, c); d != "" {
		t.Errorf("a refused configuration is returned partly filled:\n%s", d)
	}
}

// TestConfigErrorsOddLayout: the line and key are found however the TOML
// is laid out, not only for one `key = value` per line under a bare
// header.
func TestConfigErrorsOddLayout(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, doc string
		line      int
		key       string
	}{
		{"header-comment", "[resources.db] # the database\ncreate = \"mk\"\ndestroy = \"rm\"\nretries = -1\n", 4, "resources.db.retries"},
		{"quoted-name", "[resources.\"my db\"]\ncreate = \"mk\"\ndestroy = \"rm\"\n", 1, "my db"},
		{"header-spaces", "[ resources.db ]\ncreate = \"mk\"\ndestroy = \"rm\"\nretries = -1\n", 4, "resources.db.retries"},
		{"inline-table-unknown", "[resources]\ndb = { create = \"mk\", destroy = \"rm\", bogus = 1 }\n", 2, "resources.db.bogus"},
		{"inline-table-retries", "[resources]\ndb = { create = \"mk\", destroy = \"rm\", retries = 99 }\n", 2, "resources.db.retries"},
		{"inline-table-type", "[resources]\ndb = { create = \"mk\", destroy = \"rm\", retries = \"x\" }\n", 2, "resources.db.retries"},
		{"multiline-inline-table-retries", "[resources]\ndb = {\n  create = \"mk\",\n  destroy = \"rm\",\n  retries = 11,\n}\n", 5, "resources.db.retries"},
		{"multiline-inline-table-unknown", "[resources]\ndb = {\n  create = \"mk\",\n  bogus = 1,\n}\n", 4, "resources.db.bogus"},
		{"multiline-array-type", "[cleanup]\ndisposable = [\n  \"a\",\n  2,\n]\n", 2, "cleanup.disposable"},
		{"dotted-missing-create", "\n# db\nresources.db.destroy = \"rm\"\n", 3, "resources.db"},
		{"table-dotted-missing-create", "[resources]\n\ndb.destroy = \"rm\"\n", 3, "resources.db"},
		{"quoted-dotted-retries", "\"resources\" . 'db' . create = \"mk\"\nresources.db.destroy = 'rm'\nresources.db.retries = -3\n", 3, "resources.db.retries"},
		{"default-span-too-wide", "[worktree]\n\nport_base = 60000\n", 1, "worktree.port_span"},
		{"syntax-after-comments", "[worktree]\n# a\n\n  # b\nroot = \"x\n", 5, "worktree.root"},
		{"syntax-quoted-key", "[project]\n\"sl\\u0075g\" = = 1\n", 2, "project.slug"},
		{"syntax-header", "[project]\nslug = \"x\"\n[worktree\n", 3, "worktree"},
		{"syntax-multiline-value", "[resources.db]\ncreate = \"\"\"\nx\n\"\"\"\nretries = 1_\n", 5, "resources.db.retries"},
		{"duplicate-table", cfgRes("db") + "\n" + cfgRes("db"), 5, "resources.db"},
		{"duplicate-in-inline-table", "[resources]\ndb = { create = \"a\", create = \"b\" }\n", 2, "resources.db"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfgWantError(t, tt.doc, tt.line, tt.key)
		})
	}
}

// TestConfigWrongTypeResources: `resources` that is not a table is a wrong
// type, not an empty declaration.
func TestConfigWrongTypeResources(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{"resources = 3\n", "resources = \"db\"\n", "resources = []\n"} {
		t.Run(strings.TrimSpace(doc), func(t *testing.T) {
			t.Parallel()
			cfgWantError(t, doc, 1, "resources")
		})
	}
}

// TestConfigDottedKeys: a resource declared with TOML dotted keys is a
// resource like any other; it is never silently dropped.
func TestConfigDottedKeys(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{
		"resources.db.create = \"mk db\"\nresources.db.destroy = \"rm db\"\n",
		"[resources]\ndb.create = \"mk db\"\ndb.destroy = \"rm db\"\n",
	} {
		t.Run(strings.SplitN(doc, "\n", 2)[0], func(t *testing.T) {
			t.Parallel()
			c, err := ParseConfig(cfgName, []byte(doc), "repo")
			if err != nil {
				t.Fatalf("ParseConfig:\n%s\n= %v", doc, err)
			}
			if d := cmp.Diff(cfgDefaults("repo", cfgSpec("db")), c); d != "" {
				t.Errorf("ParseConfig:\n%s\n(-want +got):\n%s", doc, d)
			}
		})
	}
	// And its values are validated like a table's.
	c, err := ParseConfig(cfgName, []byte("resources.db.create = \"mk\"\nresources.db.destroy = \"rm\"\nresources.db.retries = 11\n"), "repo")
	if err == nil {
		t.Errorf("retries = 11 in dotted keys accepted: %+v", c)
	}
}

// TestConfigResourceHandlesDistinct: two resources of one worktree never
// share a handle or a .env variable; names that sanitize to the same
// handle (db-x and db_x, db and db-) are refused, or kept apart.
func TestConfigResourceHandlesDistinct(t *testing.T) {
	t.Parallel()
	for _, pair := range [][2]string{{"db-x", "db_x"}, {"db", "db-"}, {"cache", "cache__"}} {
		t.Run(pair[0]+"/"+pair[1], func(t *testing.T) {
			t.Parallel()
			doc := cfgRes(pair[0]) + cfgRes(pair[1])
			c, err := ParseConfig(cfgName, []byte(doc), "repo")
			if err != nil {
				if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), pair[1]) {
					t.Errorf("refusal does not name %s: %v", pair[1], err)
				}
				return
			}
			h0, h1 := machine.Handle(c.Slug, "x-a1b2c3", pair[0]), machine.Handle(c.Slug, "x-a1b2c3", pair[1])
			if h0 == h1 {
				t.Errorf("resources %q and %q are accepted and share the handle %q", pair[0], pair[1], h0)
			}
		})
	}
}

func TestConfigLoad(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "Main Checkout")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	repo := hostio.Repo{MainCheckout: dir, CommonDir: filepath.Join(dir, ".git"), Toplevel: dir}
	c, err := LoadConfig(repo)
	if err != nil {
		t.Fatalf("LoadConfig without custody.toml: %v", err)
	}
	if d := cmp.Diff(cfgDefaults("main-checkout"), c); d != "" {
		t.Errorf("LoadConfig without custody.toml (-want +got):\n%s", d)
	}
	path := filepath.Join(dir, machine.ConfigFile)
	if err := os.WriteFile(path, []byte(cfgRes("zz")+cfgRes("aa")), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err = LoadConfig(repo)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(cfgDefaults("main-checkout", cfgSpec("zz"), cfgSpec("aa")), c); d != "" {
		t.Errorf("LoadConfig (-want +got):\n%s", d)
	}
	if err := os.WriteFile(path, []byte("\n\n[resources.db]\nretries = -1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = LoadConfig(repo)
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "line ") {
		t.Errorf("LoadConfig of a bad file = %v, want ErrConfig naming %s and a line", err, path)
	}
	// A directory where the file should be is not a missing file.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(repo); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), path) {
		t.Errorf("LoadConfig with a directory custody.toml = %v, want ErrConfig naming %s", err, path)
	}
}

var (
	cfgNameRE = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)
	cfgSlugRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
)

// TestConfigMessages: the refusals keep their exact shape, which scripts
// and people match: `line N: unknown key "k"`, `line N (last key "k"): why`
// for a wrong type or a document TOML does not allow, `line N: k: why` for
// a value custody refuses; every one of them is one line.
func TestConfigMessages(t *testing.T) {
	t.Parallel()
	const p = "invalid project configuration: " + cfgName + ": "
	tests := []struct{ doc, want string }{
		{"[worktree]\nbranch_prefx = \"x/\"\n", p + `line 2: unknown key "worktree.branch_prefx"`},
		{"[resources.\"my db\"]\nbogus = 1\n", p + `line 2: unknown key "resources.\"my db\".bogus"`},
		{"[[resources]]\ncreate = \"a\"\n", p + `line 2: unknown key "resources.create"`},
		{cfgRes("db", "retries = \"two\"\n"), p + `line 4 (last key "resources.db.retries"): incompatible types: TOML value has type string; destination has type integer`},
		{"[project]\nslug = 1\n", p + `line 2 (last key "project.slug"): incompatible types: TOML value has type integer; destination has type string`},
		{"[resources]\ndb = 3\n", p + `line 2 (last key "resources.db"): incompatible types: TOML value has type integer; destination has type table`},
		{"resources = 3\n", p + `line 1: resources: must be a table of [resources.<name>] tables, not a integer`},
		{"resources = []\n", p + `line 1: resources: must be a table of [resources.<name>] tables, not a array`},
		{"resources = 1979-05-27\n", p + `line 1: resources: must be a table of [resources.<name>] tables, not a datetime`},
		{"[[resources]]\n", p + `line 1: resources: must be a table of [resources.<name>] tables, not a arrayhash`},
		{cfgRes("db", "retries = 11\n"), p + `line 4: resources.db.retries: 11 is outside 0..10`},
		{"[resources.\"a.b\"]\ncreate = \"x\"\ndestroy = \"y\"\n", p + `line 1: resources.a.b: resource name "a.b" must be at most 32 lower case letters and digits, words joined by one '-' or '_'`},
		{"a = 0x\n", p + `line 1 (last key "a"): radix prefix must be followed by at least one digit`},
	}
	for _, tt := range tests {
		t.Run(strings.SplitN(tt.doc, "\n", 2)[0], func(t *testing.T) {
			t.Parallel()
			_, err := ParseConfig(cfgName, []byte(tt.doc), "repo")
			if err == nil || err.Error() != tt.want {
				t.Errorf("ParseConfig:\n%s\n= %v\nwant %s", tt.doc, err, tt.want)
			}
		})
	}
}

// TestConfigInvalidTOMLRefused: what the TOML specification forbids is
// refused, naming the line and the key, though a lenient reader takes it:
// a table defined again by a header or a dotted key, an inline table
// extended, a value the type cannot hold.
func TestConfigInvalidTOMLRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, doc string
		line      int
		key       string
	}{
		{"header-after-dotted", "resources.db.create = \"a\"\n[resources.db]\ndestroy = \"b\"\n", 2, "resources.db"},
		{"dotted-into-header-table", "[resources.db]\ncreate = \"a\"\ndestroy = \"b\"\n[resources]\ndb.retries = 1\n", 5, "resources.db.retries"},
		{"inline-table-extended", "[resources]\ndb = {create = 'a', destroy = 'b'}\ndb.retries = 1\n", 3, "resources.db.retries"},
		{"header-after-dotted-project", "project.slug = 'a'\n[project]\n", 2, "project"},
		{"integer-beyond-64-bits", cfgRes("db", "retries = 99999999999999999999\n"), 4, "resources.db.retries"},
		{"impossible-date", "[project]\nslug = 1979-13-01\n", 2, "project.slug"},
		{"nul", "[project]\nslug = \"a\x00\"\n", 2, "project.slug"},
		{"utf16", "\xff\xfe[\x00p\x00", 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfgWantError(t, tt.doc, tt.line, tt.key)
		})
	}
}

// TestConfigByteOrderMark: a UTF-8 byte order mark before the first line,
// as some editors write, is not content; the lines count as written.
func TestConfigByteOrderMark(t *testing.T) {
	t.Parallel()
	got, err := ParseConfig(cfgName, []byte("\uFEFF"+cfgRes("db")), "repo")
	if err != nil {
		t.Fatalf("ParseConfig with a byte order mark: %v", err)
	}
	if d := cmp.Diff(cfgDefaults("repo", cfgSpec("db")), got); d != "" {
		t.Errorf("ParseConfig with a byte order mark (-want +got):\n%s", d)
	}
	cfgWantError(t, "\uFEFF"+cfgRes("db", "retries = 11\n"), 4, "resources.db.retries")
}

// TestConfigKeysBounded: a file of up to MaxConfigSize bytes of keys, in
// every layout (top-level keys, headers, a dotted key of many parts,
// tables in an array, nested inline tables, keys in one table), is refused
// at once, naming the line where it passed MaxConfigKeys, where checking
// it for keys defined twice would take minutes; a file under the bound
// with hundreds of resources is read.
func TestConfigKeysBounded(t *testing.T) {
	t.Parallel()
	fill := func(prefix, format string) string {
		var b strings.Builder
		b.WriteString(prefix)
		for i := 0; b.Len() < MaxConfigSize-64; i++ {
			fmt.Fprintf(&b, format, i)
		}
		return b.String()
	}
	for name, doc := range map[string]string{
		"top-level-keys": fill("", "k%d = 1\n"),
		"table-keys":     fill("[resources.db]\n", "k%d = 1\n"),
		"headers":        fill("", "[t%d]\n"),
		"resources":      fill("[resources]\n", "r%d = { create = 'a', destroy = 'b' }\n"),
		"dotted-key":     strings.Repeat("a.", MaxConfigSize/4) + "a = 1\n",
		"array-tables":   "a = [" + strings.Repeat("{},", MaxConfigSize/4) + "]\n",
		"nested-inline":  "a = " + strings.Repeat("{b=", 9000) + "1" + strings.Repeat("}", 9000) + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			_, err := ParseConfig(cfgName, []byte(doc), "repo")
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), fmt.Sprintf("more keys than the %d custody reads", MaxConfigKeys)) {
				t.Errorf("ParseConfig of %d bytes = %v, want ErrConfig naming the bound", len(doc), err)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("ParseConfig of %d bytes took %v", len(doc), d)
			}
		})
	}
	var doc strings.Builder
	var want []machine.ResourceSpec
	for i := range 500 {
		n := fmt.Sprintf("r%d", i)
		doc.WriteString(cfgRes(n))
		want = append(want, cfgSpec(n))
	}
	got, err := ParseConfig(cfgName, []byte(doc.String()), "repo")
	if err != nil {
		t.Fatalf("ParseConfig of 500 resources: %v", err)
	}
	if d := cmp.Diff(cfgDefaults("repo", want...), got); d != "" {
		t.Errorf("ParseConfig of 500 resources (-want +got):\n%s", d)
	}
}

func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		"",
		cfgRes("db"),
		cfgRes("zz") + cfgRes("aa", "retries = 3\ntimeout = \"1m\"\ngc = false\nrequired = false\nensure = \"x\"\n"),
		"[project]\nslug = \"Shop\"\n[worktree]\nroot = \"t\"\nbranch_prefix = \"wt/\"\nport_base = 3000\nport_span = 10\n",
		"[resources]\ndb = { create = \"a\", destroy = \"b\" }\n",
		"resources.db.create = \"a\"\nresources.db.destroy = \"b\"\n",
		cfgRes("db", "timeout = \"-5s\"\n"),
		"[resources.\"a.b\"]\ncreate = \"x\"\ndestroy = \"y\"\n",
		"[[resources]]\n",
		"[resources.db] # c\ncreate = '''\nx\n'''\ndestroy = \"y\"\n",
		"[resources]\ndb = {\n  create = \"a\", # c\n  destroy = \"b\",\n}\n",
		"[project]\nslug = \"x\n",
		"resources.db.create = \"a\"\n[resources.db]\n",
		"[[resources.db]]\n[worktree]\nport_base = 0x400\n",
		"\uFEFF[cleanup]\ndisposable = [\"*.log\"]\n",
	} {
		f.Add(s, "repo")
	}
	f.Fuzz(func(t *testing.T, doc, dir string) {
		c, err := ParseConfig(cfgName, []byte(doc), dir)
		if err != nil {
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), cfgName) {
				t.Fatalf("error %v is not ErrConfig naming the file", err)
			}
			if strings.ContainsAny(err.Error(), "\r\n") {
				t.Fatalf("error %q is not one line", err)
			}
			return
		}
		if !cfgSlugRE.MatchString(c.Slug) {
			t.Errorf("slug %q is not [a-z0-9-]", c.Slug)
		}
		if c.PortBase < 1024 || c.PortSpan < 1 || c.PortBase+c.PortSpan-1 > 65535 {
			t.Errorf("ports %d+%d out of range", c.PortBase, c.PortSpan)
		}
		seen := map[string]bool{}
		for _, r := range c.Resources {
			if !cfgNameRE.MatchString(r.Name) {
				t.Errorf("resource name %q accepted", r.Name)
			}
			if seen[r.Name] {
				t.Errorf("resource %q listed twice", r.Name)
			}
			seen[r.Name] = true
			if r.Timeout <= 0 {
				t.Errorf("resource %s: timeout %v is not positive", r.Name, r.Timeout)
			}
			if r.Retries < 0 || r.Retries > 10 {
				t.Errorf("resource %s: retries %d", r.Name, r.Retries)
			}
			if strings.TrimSpace(r.Create) == "" || strings.TrimSpace(r.Destroy) == "" {
				t.Errorf("resource %s: empty create or destroy accepted", r.Name)
			}
		}
	})
}
