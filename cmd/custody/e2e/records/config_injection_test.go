package records

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
)

var (
	sqlIdentifier = regexp.MustCompile(`^[a-z]([a-z0-9_]*[a-z0-9])?$`)
	dnsLabel      = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)
)

// TestConfigInjectionCorpus: a hostile value in every custody.toml key
// that reaches a path, a branch, a handle or a command (project.slug,
// worktree.root, worktree.branch_prefix, a resource's name and timeout)
// either is refused as an invalid configuration (exit 1, config-invalid
// naming the key, nothing made) or is carried as data: the tree and branch
// custody makes are exactly where the record says, the resource command
// receives each value byte for byte, and no value ever runs code (the
// canary never appears). Then the tree goes through finish, plan and apply
// with the same outcome.
func TestConfigInjectionCorpus(t *testing.T) {
	t.Parallel()
	type tc struct {
		name string
		// section is the custody.toml text before the resource; CANARY
		// stands for the canary's path.
		section string
		// resource is the resource's table name.
		resource string
		// key is the key an invalid configuration must name.
		key string
	}
	cases := []tc{
		{"slug-subst", `[project]` + "\n" + `slug = "$(touch CANARY)"`, "db", ""},
		{"slug-backtick", `[project]` + "\n" + "slug = \"`touch CANARY`\"", "db", ""},
		{"slug-newline", `[project]` + "\n" + `slug = "a\ntouch CANARY"`, "db", ""},
		{"slug-traversal", `[project]` + "\n" + `slug = "../../x; touch CANARY"`, "db", ""},
		{"root-subst", `[worktree]` + "\n" + `root = ".wt/$(touch CANARY)"`, "db", ""},
		{"root-quote", `[worktree]` + "\n" + `root = ".wt/it's \"quoted\" ; touch CANARY"`, "db", ""},
		{"root-traversal", `[worktree]` + "\n" + `root = "../outside"`, "db", "worktree.root"},
		{"root-dash", `[worktree]` + "\n" + `root = "-rf"`, "db", ""},
		{"prefix-option", `[worktree]` + "\n" + `branch_prefix = "--upload-pack=touch CANARY/"`, "db", "worktree.branch_prefix"},
		{"prefix-subst", `[worktree]` + "\n" + `branch_prefix = "$(touch CANARY)/"`, "db", "worktree.branch_prefix"},
		{"prefix-dotdot", `[worktree]` + "\n" + `branch_prefix = "a/../b/"`, "db", "worktree.branch_prefix"},
		{"prefix-lock", `[worktree]` + "\n" + `branch_prefix = "x.lock"`, "db", "worktree.branch_prefix"},
		{"resource-name-subst", "", `"$(touch CANARY)"`, `resources.$(touch CANARY)`},
		{"resource-name-semicolon", "", `"db;touch"`, "resources.db;touch"},
		{"timeout-garbage", "", "db", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := fixtures.New(t, fixtures.Options{})
			canary := filepath.Join(r.Root, "canary")
			logf := filepath.Join(r.Root, "log")
			create := `printf '%s\n' @dir@ @branch@ @resource@ @slug@ @id@ @db@ @site@ @worktree@ > ` + logf
			if c.name == "resource-name-subst" || c.name == "resource-name-semicolon" {
				create = `touch ` + canary
			}
			body := strings.ReplaceAll(c.section, "CANARY", canary) + "\n\n[resources." + strings.ReplaceAll(c.resource, "CANARY", canary) + "]\n" +
				"create = '''" + create + "'''\ndestroy = '''true'''\n"
			if c.name == "timeout-garbage" {
				body += "timeout = \"$(touch " + canary + ")\"\n"
				c.key = "resources.db.timeout"
			}
			r.WriteFile(r.Dir, "custody.toml", body)
			trust := clitest.Custody(t, r, "trust")
			res := clitest.Custody(t, r, "new", "fix")
			if _, err := os.Lstat(canary); err == nil {
				t.Fatalf("a custody.toml value ran code (the canary exists):\n%s\n%s\n%s", body, trust, res)
			}
			if c.key != "" {
				c.key = strings.ReplaceAll(c.key, "CANARY", canary)
				if res.Code != 1 || !strings.Contains(res.Stderr, "config-invalid") || !strings.Contains(res.Stderr, c.key) {
					t.Fatalf("new with a hostile %s: want exit 1, config-invalid naming %s:\n%s", c.key, c.key, res)
				}
				if out := r.Git("worktree", "list", "--porcelain"); strings.Count(out, "worktree ") != 1 {
					t.Errorf("a refused configuration left a worktree:\n%s", out)
				}
				if out := r.Git("branch", "--list"); strings.Count(out, "\n") > 1 {
					t.Errorf("a refused configuration left branches:\n%s", out)
				}
				return
			}
			if res.Code != 0 {
				t.Fatalf("new with a hostile but valid value: want exit 0:\n%s\n%s", body, res)
			}
			recs := clitest.ListRecords(t, r, true)
			if len(recs) != 1 {
				t.Fatalf("records: %+v", recs)
			}
			rec := recs[0]
			if got := strings.TrimSpace(res.Stdout); got != rec.Path {
				t.Errorf("new printed %q, the record says %q", got, rec.Path)
			}
			if fi, err := os.Lstat(rec.Path); err != nil || !fi.IsDir() {
				t.Fatalf("the tree is not at its recorded path %q: %v", rec.Path, err)
			}
			if !strings.HasPrefix(rec.Path, r.Dir+string(filepath.Separator)) {
				t.Errorf("the tree %q is outside the main checkout %q", rec.Path, r.Dir)
			}
			if got := r.Git("rev-parse", "--verify", "--quiet", "refs/heads/"+rec.Branch); strings.TrimSpace(got) == "" {
				t.Errorf("branch %q does not exist", rec.Branch)
			}
			b, err := os.ReadFile(logf)
			if err != nil {
				t.Fatalf("the resource's create did not run: %v", err)
			}
			lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
			if len(lines) < 8 || lines[0] != rec.Path || lines[1] != rec.Branch || lines[len(lines)-4] != rec.ID || lines[len(lines)-1] != rec.ID {
				t.Errorf("the create saw %q, want the tree %q, branch %q, id %q as data", lines, rec.Path, rec.Branch, rec.ID)
			}
			// discern's @db@ and @site@ of a hostile slug: an SQL
			// identifier and a DNS label, at most 63 bytes.
			if n := len(lines); n >= 8 && (!sqlIdentifier.MatchString(lines[n-3]) || len(lines[n-3]) > 63 || !dnsLabel.MatchString(lines[n-2]) || len(lines[n-2]) > 63) {
				t.Errorf("@db@ %q and @site@ %q are not an identifier and a DNS label of at most 63 bytes", lines[n-3], lines[n-2])
			}
			clitest.MustCustody(t, r, 0, "finish", rec.ID)
			plan := filepath.Join(r.Root, "plan.json")
			clitest.Custody(t, r, "plan", "-o", plan)
			clitest.Custody(t, r, "apply", plan)
			if _, err := os.Lstat(canary); err == nil {
				t.Fatalf("finish, plan or apply ran code from a custody.toml value")
			}
		})
	}
}
