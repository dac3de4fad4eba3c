package report

// The auditor's report of a mixed history with a migration: a legacy
// layout migrated with three dispositions (land, retire, archive), trees
// removed with their build output, an archive-backed removal, an adopted
// tree, resources made and destroyed. The history is made live (real git,
// the real binary) and its report checked; its redacted export is checked
// in (testdata/report/migration.jsonl), and the report of that export, in
// HTML and markdown, must equal the goldens byte for byte: the export's
// own ids and times make it deterministic. The HTML golden is opened in
// headless Chromium, offline, and read back.

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
)

// rpMigrationHistory makes the mixed history and returns the repository
// and the ids it is checked by.
type rpMixed struct {
	r                       *fixtures.Repo
	land, retire, archived  string // legacy candidates by disposition
	web, adopted, resources string
}

func rpMigrationHistory(t *testing.T) rpMixed {
	t.Helper()
	r := fixtures.New(t, fixtures.Options{})
	var m rpMixed
	m.r = r
	// A legacy layout made with plain git before custody: a tree with
	// work no remote has (land), a published tree with build output beside
	// its tracked lockfile (retire), a tree with uncommitted edits
	// (archive). They stand under an old root inside the main checkout
	// (excluded from its status), so the redacted export names them by
	// $REPO, as it names everything of the repository.
	r.WriteFile(r.Dir, ".git/info/exclude", "/old-trees/\n/plan.json\n/migrate.json\n")
	land := filepath.Join(r.Dir, "old-trees", "legacy-land")
	r.Git("worktree", "add", "-q", "-b", "legacy-land", land, "main")
	r.Commit(land, "land.txt", "work no remote has\n")
	retire := filepath.Join(r.Dir, "old-trees", "legacy-retire")
	r.Git("worktree", "add", "-q", "-b", "legacy-retire", retire, "main")
	r.WriteFile(retire, "package.json", `{"name":"x"}`+"\n")
	r.WriteFile(retire, "package-lock.json", `{"name":"x"}`+"\n")
	r.CommitAll(retire, "web")
	r.Push(retire, "legacy-retire")
	r.WriteFile(retire, "node_modules/left-pad/index.js", "module.exports = 1\n")
	arc := filepath.Join(r.Dir, "old-trees", "legacy-dirty")
	r.Git("worktree", "add", "-q", "-b", "legacy-dirty", arc, "main")
	r.WriteFile(arc, "README", "edited and never committed\n")
	m.land, m.retire, m.archived = "legacy-land", "legacy-retire", "legacy-dirty"

	clitest.MustCustody(t, r, 0, "init")
	plan := clitest.MigratePlan(t, r, "migrate.json")
	want := map[string]machine.Disposition{m.land: machine.DispositionLand, m.retire: machine.DispositionRetire, m.archived: machine.DispositionArchive}
	for _, c := range plan.Candidates {
		d, ok := want[c.Audit.ID]
		if !ok {
			clitest.MustCustody(t, r, 0, "migrate", "dispose", c.Audit.ID, "--reject", "kept where it is", "--digest", c.Digest)
			continue
		}
		clitest.MustCustody(t, r, 0, "migrate", "dispose", c.Audit.ID, "--approve", "--disposition", string(d), "--digest", c.Digest)
		delete(want, c.Audit.ID)
	}
	if len(want) != 0 {
		t.Fatalf("the migrate plan has no candidate %v", want)
	}
	clitest.MustCustody(t, r, 0, "migrate", "apply", "migrate.json", "--allow-external-retirement")

	// A tree made with plain git after the migration, then adopted.
	adopt := filepath.Join(r.Dir, "old-trees", "adopt-me")
	r.Git("worktree", "add", "-q", "-b", "adopt-me", adopt, "main")

	// custody's own trees: one resource each, made and destroyed with
	// the tree.
	clitest.WriteTrusted(t, r, "[resources.cache]\ncreate = 'true'\ndestroy = 'true'\n")
	web, webPath := clitest.NewTree(t, r, "web")
	r.WriteFile(webPath, "package.json", `{"name":"web"}`+"\n")
	r.WriteFile(webPath, "package-lock.json", `{"name":"web"}`+"\n")
	r.CommitAll(webPath, "web")
	r.Push(webPath, "web")
	r.WriteFile(webPath, "node_modules/left-pad/index.js", "module.exports = 2\n")
	m.web = web
	// Unpublished work with build output: the archive leaves the build
	// output out, and the removal on the archive's proof deletes it.
	kept, keptPath := clitest.NewTree(t, r, "unpublished")
	r.WriteFile(keptPath, "package.json", `{"name":"u"}`+"\n")
	r.WriteFile(keptPath, "package-lock.json", `{"name":"u"}`+"\n")
	r.CommitAll(keptPath, "only in the archive")
	r.WriteFile(keptPath, "node_modules/left-pad/index.js", "module.exports = 3\n")
	if err := os.Remove(filepath.Join(keptPath, ".env")); err != nil {
		t.Fatal(err)
	}
	clitest.MustCustody(t, r, 0, "adopt", adopt)
	clitest.MustCustody(t, r, 0, "finish", web)
	clitest.MustCustody(t, r, 0, "finish", "--archive", kept)
	p := filepath.Join(r.Dir, "plan.json")
	clitest.PlanAllowPending(t, r, "-o", p)
	clitest.MustCustody(t, r, 0, "apply", p)
	for _, id := range []string{web, kept} {
		if st := clitest.State(t, r, id); st != "tombstoned" {
			t.Fatalf("%s is %s after apply", id, st)
		}
	}
	return m
}

// TestReportMigrationHistory makes the mixed history and checks the live
// report: one section per record, under its kind's and operation's
// group, never continued; the summary counts each kind of outcome; each
// legacy tree's section says its disposition, who approved it, the audit
// digest and the outcome; each removal lists the build output deleted
// with it. With -update-report it rewrites the checked-in export.
func TestReportMigrationHistory(t *testing.T) {
	if !*updateReport {
		t.Parallel()
	}
	m := rpMigrationHistory(t)
	r := m.r
	md := clitest.MustCustody(t, r, 0, "journal", "report", "--format", "md").Stdout
	md = strings.ReplaceAll(md, `\_`, "_")
	rpCheckMixed(t, md)
	if *updateReport {
		exp := filepath.Join(r.Root, "migration.jsonl")
		clitest.MustCustody(t, r, 0, "journal", "export", "--redact", "-o", exp)
		e, err := os.ReadFile(exp)
		if err != nil {
			t.Fatal(err)
		}
		// Redaction goes by structure: no line, discovery's included,
		// names anything of this machine.
		rpNoIdentity(t, r, string(e))
		if err := os.WriteFile(filepath.Join("testdata", "report", "migration.jsonl"), e, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// rpCheckMixed checks a report (markdown, or the browser's text of the
// page) of the mixed history.
func rpCheckMixed(t *testing.T, page string) {
	t.Helper()
	if strings.Contains(page, "continued") {
		t.Error("the report holds a continued section")
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`trees migrated \(by disposition\)\W+3 \(archive 1, land 1, retire 1\)`),
		regexp.MustCompile(`trees adopted\W+3\b`), // the adopted tree and the two legacy trees retired through adoption
		regexp.MustCompile(`trees removed\W+4\b`),
		regexp.MustCompile(`trees archived\W+2\b`),
		regexp.MustCompile(`resources destroyed\W+2\b`),
		regexp.MustCompile(`build output deleted with trees\W+3 directories`),
		regexp.MustCompile(`Worktrees migrated: land \(1\)`),
		regexp.MustCompile(`Worktrees migrated: retire \(1\)`),
		regexp.MustCompile(`Worktrees migrated: archive \(1\)`),
		// The legacy trees retired and archived are adopted under their
		// candidate ids: their removals are shown in their migration
		// sections.
		regexp.MustCompile(`Worktrees removed \(2\)`),
		regexp.MustCompile(`Worktrees kept \(1\)`),
		regexp.MustCompile(`trees kept \(still in custody\)\W+1\b`),
		regexp.MustCompile(`Disposition: land, approved by \S+ \(seq \d+\)\.`),
		regexp.MustCompile(`Outcome: landed at seq \d+ \(settled\)\.`),
		// the ref the land pushed to, and the commit it proved there
		regexp.MustCompile(`Proof: ancestry on origin refs/heads/custody/review/legacy-land; head [0-9a-f]{40}\.`),
		regexp.MustCompile(`Legacy branch: legacy-retire\.`),
		regexp.MustCompile(`Outcome: removed at seq \d+ \(settled\)\.`),
		regexp.MustCompile(`Audit digest: sha256:[0-9a-f]{64}`),
		regexp.MustCompile(`land → landed`),
		regexp.MustCompile(`retire → removed`),
		regexp.MustCompile(`archive → removed`),
		regexp.MustCompile(`Build output deleted with the tree: node_modules \(node-modules, \d+ bytes\)`),
		regexp.MustCompile(`Proof: archive`),
		regexp.MustCompile(`Resources destroyed \(2\)`),
	} {
		if !want.MatchString(page) {
			t.Errorf("the report does not match %s", want)
		}
	}
	// Each record's heading appears once.
	seen := map[string]bool{}
	for _, h := range regexp.MustCompile(`(?m)^### (.*)$`).FindAllStringSubmatch(page, -1) {
		if seen[h[1]] {
			t.Errorf("record %s has two sections", h[1])
		}
		seen[h[1]] = true
	}
	for _, n := range []int{strings.Count(page, "Build output deleted with the tree: node_modules")} {
		if n != 3 {
			t.Errorf("%d removals list node_modules, want 3 (the retired legacy tree, the web tree, the archived tree)", n)
		}
	}
}

// TestReportMigrationGolden renders the checked-in export of the mixed
// history in HTML and markdown: each must equal its golden byte for byte
// (rewritten with -update-report), the markdown must tell the whole story
// (rpCheckMixed), and the HTML page, opened in headless Chromium, must
// load nothing and show every legacy tree's disposition and outcome.
func TestReportMigrationGolden(t *testing.T) {
	t.Parallel()
	exp := filepath.Join("testdata", "report", "migration.jsonl")
	if _, err := os.Stat(exp); err != nil {
		t.Fatalf("no checked-in history (run go test ./cmd/custody/e2e/report -run TestReportMigration -update-report): %v", err)
	}
	abs, _ := filepath.Abs(exp)
	r := fixtures.New(t, fixtures.Options{})
	dir := t.TempDir()
	for _, format := range []string{"md", "html"} {
		out := filepath.Join(dir, "migration."+format)
		res := clitest.RunBin(t, clitest.Bin(), r, filepath.Dir(abs), nil, "journal", "report", "migration.jsonl", "--format", format, "-o", out)
		if res.Code != 0 {
			t.Fatalf("report of the checked-in history: %s", res)
		}
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		got = []byte(strings.ReplaceAll(string(got), "custody "+rpVersion(string(got)), "custody VERSION"))
		golden := filepath.Join("testdata", "report", "migration."+format)
		if *updateReport {
			if err := os.WriteFile(golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("no golden (run with -update-report): %v", err)
		}
		if string(got) != string(want) {
			f := filepath.Join(os.TempDir(), "custody-migration-report."+format)
			_ = os.WriteFile(f, got, 0o644)
			t.Errorf("the %s report differs from %s (the report made is at %s); if the change is meant, run with -update-report", format, golden, f)
		}
		if format == "md" {
			rpCheckMixed(t, strings.ReplaceAll(string(got), `\_`, "_"))
			continue
		}
		dom, netlog := rpBrowseDOM(t, out)
		rpOffline(t, out, dom, netlog)
		text := regexp.MustCompile(`<[^>]*>`).ReplaceAllString(dom, " ")
		for _, want := range []string{"Worktrees migrated: land (1)", "Worktrees migrated: retire (1)", "Worktrees migrated: archive (1)",
			"land → landed", "Build output deleted with the tree: node_modules"} {
			if !strings.Contains(strings.ReplaceAll(text, "&gt;", ">"), want) {
				t.Errorf("the page in the browser lacks %q", want)
			}
		}
	}
}

// rpVersion is the custody version a report names ("report by custody X").
func rpVersion(page string) string {
	m := regexp.MustCompile(`report by\W+custody ([^ <|]+)`).FindStringSubmatch(page)
	if m == nil {
		return "\x00"
	}
	return m[1]
}
