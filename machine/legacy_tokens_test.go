package machine_test

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
)

// dnsLabel is one RFC 1123 label: [a-z0-9-], 1 to 63 bytes, neither end a
// dash (checked apart: the regexp holds the characters and the ends).
var dnsLabel = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)

// sqlIdent is an unquoted SQL identifier custody makes: [a-z0-9_], first a
// letter, last not an underscore.
var sqlIdent = regexp.MustCompile(`^[a-z]([a-z0-9_]*[a-z0-9])?$`)

// oddNames are names a worktree, a project or a person may have: long,
// non-ASCII, not UTF-8, leading digits and dashes, nothing usable at all.
func oddNames() map[string]string {
	return map[string]string{
		"plain":             "shop-fix-1a2b3c",
		"upper":             "Shop-Fix-1A2B3C",
		"space":             "my shop fix",
		"non-ascii":         "café-straße-日本",
		"not-utf8":          "shop-\xff\xfe-fix",
		"only-not-utf8":     "\xff\xfe\xfd",
		"leading-digits":    "123-shop",
		"leading-dashes":    "--shop-fix",
		"trailing-dashes":   "shop-fix--",
		"underscores":       "shop_fix_db",
		"empty":             "",
		"only-punctuation":  "-_-.-",
		"200-bytes":         strings.Repeat("abcdefghij", 20),
		"200-bytes-other":   strings.Repeat("abcdefghij", 19) + "abcdefghiz",
		"63-bytes":          strings.Repeat("a", 63),
		"64-bytes":          strings.Repeat("a", 64),
		"200-bytes-dashes":  strings.Repeat("-", 200),
		"200-bytes-mixed":   strings.Repeat("é-", 100),
		"newline":           "shop\nfix",
		"dots":              "shop.fix.example",
		"62-then-dash-cut":  strings.Repeat("a", 51) + "-" + strings.Repeat("b", 40),
		"leading-digit-cut": "9" + strings.Repeat("x", 100),
	}
}

// TestSiteLabelIsADNSLabel: @site@ of any name, however long or odd, is one
// RFC 1123 label of at most 63 bytes, and no two of these names share one.
func TestSiteLabelIsADNSLabel(t *testing.T) {
	t.Parallel()
	seen := map[string]string{}
	for name, in := range oddNames() {
		got := machine.SiteLabel(in)
		if len(got) < 1 || len(got) > 63 || !dnsLabel.MatchString(got) {
			t.Errorf("%s: SiteLabel(%q) = %q (%d bytes), not a DNS label", name, in, got, len(got))
		}
		if other, dup := seen[got]; dup {
			t.Errorf("%s and %s share the label %q", name, other, got)
		}
		seen[got] = name
	}
}

// TestDBNameIsAnIdentifier: @db@ of any name is an unquoted SQL identifier
// of at most 63 bytes, and no two of these names share one.
func TestDBNameIsAnIdentifier(t *testing.T) {
	t.Parallel()
	seen := map[string]string{}
	for name, in := range oddNames() {
		got := machine.DBName(in)
		if len(got) < 1 || len(got) > 63 || !sqlIdent.MatchString(got) {
			t.Errorf("%s: DBName(%q) = %q (%d bytes), not an identifier", name, in, got, len(got))
		}
		if other, dup := seen[got]; dup {
			t.Errorf("%s and %s share the identifier %q", name, other, got)
		}
		seen[got] = name
	}
}

// TestLegacyTokenValues: exact names are their own label and identifier;
// any other gets a digest of its bytes, so names that fold or are cut alike
// do not collide.
func TestLegacyTokenValues(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("abcdefghij", 20)
	cases := []struct {
		name, in, site, db string
	}{
		{name: "exact", in: "shop-fix-1a2b3c", site: "shop-fix-1a2b3c", db: "shop_fix_1a2b3c"},
		{name: "63 bytes exact", in: strings.Repeat("a", 63), site: strings.Repeat("a", 63), db: strings.Repeat("a", 63)},
		{name: "upper case folds, with a digest", in: "Shop", site: "shop-" + digest("Shop"), db: "shop_" + digest("Shop")},
		{name: "non-ascii", in: "café", site: "caf-" + digest("café"), db: "caf_" + digest("café")},
		{name: "not utf-8", in: "a\xffb", site: "a-b-" + digest("a\xffb"), db: "a_b_" + digest("a\xffb")},
		{name: "nothing usable", in: "\xff", site: digest("\xff"), db: "db_" + digest("\xff")},
		{name: "leading digit", in: "1shop", site: "1shop", db: "db_1shop_" + digest("1shop")},
		{name: "leading dash", in: "-shop", site: "shop-" + digest("-shop"), db: "shop_" + digest("-shop")},
		{name: "200 bytes", in: long, site: long[:52] + "-" + digest(long), db: long[:52] + "_" + digest(long)},
	}
	for _, c := range cases {
		got := [2]string{machine.SiteLabel(c.in), machine.DBName(c.in)}
		if diff := cmp.Diff([2]string{c.site, c.db}, got); diff != "" {
			t.Errorf("%s: (-want +got):\n%s", c.name, diff)
		}
	}
	want := map[string]string{"db": "shop_fix_1a2b3c", "site": "shop-fix-1a2b3c", "worktree": "fix-1a2b3c"}
	if diff := cmp.Diff(want, machine.LegacyTokens("shop", "fix-1a2b3c")); diff != "" {
		t.Errorf("LegacyTokens (-want +got):\n%s", diff)
	}
}

// TestLegacyTokensFrozenLikeEveryToken: @db@, @site@ and @worktree@ are
// frozen as references to CUSTODY_DB, CUSTODY_SITE and CUSTODY_WORKTREE
// wherever they stand, never as their values, like every other token;
// @worktree@ of an id that is not plain is refused inside single quotes.
func TestLegacyTokensFrozenLikeEveryToken(t *testing.T) {
	t.Parallel()
	vals := machine.LegacyTokens("shop", "fix-1a2b3c")
	cases := []struct {
		template, want string
	}{
		{`createdb -T shop_template @db@`, `createdb -T shop_template "${CUSTODY_DB}"`},
		{`dropdb --if-exists "@db@"`, `dropdb --if-exists "${CUSTODY_DB}"`},
		{`psql -c 'CREATE DATABASE @db@'`, `psql -c 'CREATE DATABASE '"${CUSTODY_DB}"''`},
		{`ln -s "$PWD" ~/sites/@site@.test`, `ln -s "$PWD" ~/sites/"${CUSTODY_SITE}".test`},
		{`echo $(basename @worktree@)`, `echo $(basename "${CUSTODY_WORKTREE}")`},
	}
	for _, c := range cases {
		got, err := machine.Freeze(c.template, vals)
		if err != nil {
			t.Errorf("Freeze(%q): %v", c.template, err)
			continue
		}
		if got != c.want {
			t.Errorf("Freeze(%q) = %q, want %q", c.template, got, c.want)
		}
		for _, v := range vals {
			if v != "" && strings.Contains(got, v) && !strings.Contains(c.template, v) {
				t.Errorf("Freeze(%q) = %q holds the value %q", c.template, got, v)
			}
		}
	}
	odd := machine.LegacyTokens("shop", "it's; rm -rf ~")
	if _, err := machine.Freeze(`echo '@worktree@'`, odd); err == nil {
		t.Errorf("@worktree@ of a value that is not plain, in single quotes, was frozen")
	}
	if got, err := machine.Freeze(`echo '@site@' '@db@'`, odd); err != nil || machine.Unexpanded(got) != "" {
		t.Errorf("@site@ and @db@ are always plain, even of an odd id: %q, %v", got, err)
	}
	for k, want := range map[string]string{"db": "CUSTODY_DB", "site": "CUSTODY_SITE", "worktree": "CUSTODY_WORKTREE"} {
		if got := machine.TokenEnv(k); got != want {
			t.Errorf("TokenEnv(%q) = %q, want %q", k, got, want)
		}
	}
}

// digest is the suffix SiteLabel and DBName give a name that is not its
// own label.
func digest(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:])[:10]
}

// TestConfigFormats: the table of versions ends at ConfigVersion, one row a
// version, oldest first, each naming the release that first reads it.
func TestConfigFormats(t *testing.T) {
	t.Parallel()
	fs := machine.ConfigFormats()
	for i, f := range fs {
		if f.Version != i+1 || f.FirstRelease == "" {
			t.Errorf("row %d = %+v, want version %d with its first release", i, f, i+1)
		}
	}
	if len(fs) == 0 || fs[len(fs)-1].Version != machine.ConfigVersion {
		t.Errorf("the last row of %+v is not ConfigVersion %d", fs, machine.ConfigVersion)
	}
}

// TestLegacyKeyOf: a key is discern's when it is or lies under one of
// LegacyKeys; custody's own keys beside them are not.
func TestLegacyKeyOf(t *testing.T) {
	t.Parallel()
	for path, want := range map[string]string{
		"worktree.db":                  "resources.db",
		"worktree.db.clone":            "resources.db",
		"worktree.dev_server.unlink":   "resources.dev_server",
		"worktree.resources.x.create":  "resources",
		"worktree.port":                "worktree.port_base",
		"worktree.port_base":           "",
		"worktree.root":                "",
		"resources.db.create":          "",
		"worktree":                     "",
		"worktree.database":            "",
		"project.slug":                 "",
		"worktree.resources_extra.foo": "",
	} {
		k, ok := machine.LegacyKeyOf(strings.Split(path, "."))
		got := ""
		if ok {
			got = strings.Join(k.To, ".")
		}
		if got != want {
			t.Errorf("LegacyKeyOf(%s) = %q, want %q", path, got, want)
		}
	}
}
