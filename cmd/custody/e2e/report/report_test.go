package report

// The auditor's report of a realistic history, end to end: removals by
// ancestry, patch equivalence and a squash merge, a kept tree, resources
// made and destroyed, and a removal killed after its intent and finished by
// resume. The page is opened in headless Chromium (Debian's, which .ci/run
// installs): it must load with no request leaving the file, its text must
// name every removed tree with its proof, and a screenshot of the report of
// the checked-in history must match the golden within a tolerance. Helpers
// are prefixed rp.

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	stdhtml "html"
	"image"
	"image/png"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/cmd/custody/internal/output"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
)

var updateReport = flag.Bool("update-report", false, "rewrite testdata/report/history.jsonl and history.png from a fresh realistic history")

// rpHistory builds the realistic history and returns the repository and
// the ids of the removed trees by the proof kind that removed them, the
// kept tree's id and the id of the archive one removal stood on.
func rpHistory(t *testing.T) (r *fixtures.Repo, removed map[string]string, kept, archive, abandoned, lost string) {
	t.Helper()
	r = fixtures.New(t, fixtures.Options{})
	clitest.MustCustody(t, r, 0, "init")
	// The frozen commands are journaled with the resource's intent: a
	// credential and a host for the redacted report to hide.
	clitest.WriteTrusted(t, r, "[resources.cache]\ncreate = 'true PGPASSWORD=hunter2 https://deploy:tok3n@db.example.com/x'\ndestroy = 'true'\n")
	removed = map[string]string{}

	anc, ancPath := clitest.NewTree(t, r, "ancestry")
	r.Commit(ancPath, "anc.txt", "published as it is\n")
	r.Push(ancPath, "main")
	removed[anc] = string(machine.ProofAncestry)

	pe, pePath := clitest.NewTree(t, r, "patch")
	r.Commit(pePath, "p1.txt", "one\n")
	r.Commit(pePath, "p2.txt", "two\n")
	r.RebaseMergeToMain("rebaser", "custody/"+pe, nil)
	removed[pe] = string(machine.ProofPatchEquivalent)

	sq, sqPath := clitest.NewTree(t, r, "squash")
	r.Commit(sqPath, "s1.txt", "one\n")
	r.Commit(sqPath, "s1.txt", "one\ntwo\n")
	r.SquashMergeToMain("squasher", "custody/"+sq, nil)
	removed[sq] = string(machine.ProofSquashMerged)

	kept, keptPath := clitest.NewTree(t, r, "kept")
	r.WriteFile(keptPath, "notes.txt", "only here\n")

	crash, crashPath := clitest.NewTree(t, r, "crash")
	r.Commit(crashPath, "c.txt", "crash\n")
	r.Push(crashPath, "crash")
	removed[crash] = string(machine.ProofAncestry)

	// Unpublished work, archived: removed on the archive's proof, and the
	// archive pruned once its commits were published.
	arc, arcPath := clitest.NewTree(t, r, "archived")
	r.Commit(arcPath, "a.txt", "only in the archive\n")
	arcHead := r.Head(arcPath)
	// Its copied .env left out, the archive holds commits only, so it
	// may be pruned once they are published.
	if err := os.Remove(filepath.Join(arcPath, ".env")); err != nil {
		t.Fatal(err)
	}
	removed[arc] = string(machine.ProofArchive)

	clitest.MustCustody(t, r, 0, "finish", anc, pe, sq, kept, crash)
	fin := clitest.DecodeResult[output.FinishArchiveResult](t, clitest.MustCustody(t, r, 0, "--json", "finish", "--archive", arc), "finish")
	if len(fin.Archives) != 1 {
		t.Fatalf("finish --archive = %+v", fin)
	}
	archive = fin.Archives[0].ID
	plan := filepath.Join(r.Root, "plan.json")
	clitest.PlanAllowPending(t, r, "-o", plan)
	clitest.MustBeKilled(t, r, "apply/after-intent", "apply", plan, "--only", crash)
	clitest.MustCustody(t, r, 0, "resume")
	clitest.MustCustody(t, r, 0, "apply", plan)
	for id := range removed {
		if st := clitest.State(t, r, id); st != "tombstoned" {
			t.Fatalf("%s is %s after apply, not tombstoned", id, st)
		}
	}
	r.Git("push", "-q", "origin", arcHead+":refs/heads/archived")
	clitest.MustCustody(t, r, 0, "archive", "prune", "--apply", archive)

	// A tree deleted by hand whose one commit was lost with it (branch
	// deleted, reflogs expired, objects pruned): abandoned on the
	// person's word, the one outcome without a proof.
	abandoned, lostPath := clitest.NewTree(t, r, "lost")
	lost = r.Commit(lostPath, "l.txt", "lost with the tree\n")
	clitest.MustCustody(t, r, 0, "finish", abandoned)
	if err := os.RemoveAll(lostPath); err != nil {
		t.Fatal(err)
	}
	r.Git("worktree", "prune")
	r.Git("branch", "-D", "custody/"+abandoned)
	r.Git("reflog", "expire", "--expire=now", "--all")
	r.Git("gc", "-q", "--prune=now")
	clitest.MustCustody(t, r, 0, "abandon", abandoned, "--acknowledge-unrecoverable", lost)
	return r, removed, kept, archive, abandoned, lost
}

// rpChromium returns the browser, skipping the test when it is absent
// outside CI and failing it under CI (.ci/run sets CUSTODY_CI_CHROMIUM).
func rpChromium(t *testing.T) string {
	t.Helper()
	const bin = "/usr/bin/chromium"
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("CUSTODY_CI_CHROMIUM") != "" || os.Getenv("CI") != "" {
			t.Fatalf("chromium is required here (.ci/run installs it with apt-get install -y chromium): %v", err)
		}
		t.Skip("chromium is not installed (apt-get install -y chromium)")
	}
	return bin
}

// rpBrowse opens page in headless Chromium, offline: every host resolves
// nowhere, and the net log records any request it tried. It returns the
// DOM, the screenshot and the net log.
func rpBrowse(t *testing.T, page string) (dom string, shot image.Image, netlog string) {
	t.Helper()
	run, dir := rpChromiumRunner(t, page)
	dom, netlog = rpDOM(t, run, dir)
	shotFile := filepath.Join(dir, "shot.png")
	run("--screenshot=" + shotFile)
	f, err := os.Open(shotFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if shot, err = png.Decode(f); err != nil {
		t.Fatal(err)
	}
	return dom, shot, netlog
}

// rpBrowseDOM opens page in headless Chromium once, offline, and returns
// the DOM and the net log (no screenshot).
func rpBrowseDOM(t *testing.T, page string) (dom, netlog string) {
	t.Helper()
	run, dir := rpChromiumRunner(t, page)
	return rpDOM(t, run, dir)
}

func rpDOM(t *testing.T, run func(extra ...string) []byte, dir string) (dom, netlog string) {
	t.Helper()
	log := filepath.Join(dir, "net.json")
	dom = string(run("--dump-dom", "--log-net-log="+log, "--net-log-capture-mode=Everything"))
	nl, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	return dom, string(nl)
}

// rpChromiumRunner returns a function that runs headless Chromium on
// page with extra flags, and the directory it keeps its profile in.
func rpChromiumRunner(t *testing.T, page string) (func(extra ...string) []byte, string) {
	t.Helper()
	bin := rpChromium(t)
	dir := t.TempDir()
	common := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + filepath.Join(dir, "profile"), "--host-resolver-rules=MAP * ~NOTFOUND",
		"--hide-scrollbars", "--force-device-scale-factor=1", "--window-size=1150,3200",
		"--font-render-hinting=none", "--disable-lcd-text",
		// Draw every tile before the screenshot: without these, a loaded
		// machine can capture a page half painted.
		"--run-all-compositor-stages-before-draw", "--virtual-time-budget=5000"}
	run := func(extra ...string) []byte {
		cmd := exec.Command(bin, append(append(append([]string{}, common...), extra...), "file://"+page)...)
		cmd.Env = append(os.Environ(), "HOME="+dir)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("chromium %v: %v\n%s", extra, err, errb.String())
		}
		return out.Bytes()
	}
	return run, dir
}

// rpOffline fails when the page asks for anything outside itself: the DOM
// names no URL to load and the net log holds no request but the file's own.
func rpOffline(t *testing.T, page, dom, netlog string) {
	t.Helper()
	rpOfflineTo(t, page, dom, netlog)
}

// rpReporter is the part of testing.T the offline check reports through.
type rpReporter interface {
	Helper()
	Errorf(format string, args ...any)
	Error(args ...any)
	Fatalf(format string, args ...any)
}

// rpRecorder records what a check reports instead of failing.
type rpRecorder struct{ errs []string }

func (r *rpRecorder) Helper() {}
func (r *rpRecorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *rpRecorder) Error(args ...any) { r.errs = append(r.errs, fmt.Sprint(args...)) }
func (r *rpRecorder) Fatalf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func rpOfflineTo(t rpReporter, page, dom, netlog string) {
	t.Helper()
	if !strings.Contains(dom, `default-src 'none'`) {
		t.Errorf("the page has no Content-Security-Policy that forbids loading:\n%.400s", dom)
	}
	if m := regexp.MustCompile(`(?i)(src|href|action|srcset|poster)\s*=|url\(|@import|<script|<link|<img|<iframe`).FindString(dom); m != "" {
		t.Errorf("the page loads or links something (%q)", m)
	}
	// The browser's own background requests (initiator "not an origin":
	// update and account checks) resolve nowhere (--host-resolver-rules)
	// and are not the page's; every request the page starts carries its
	// origin (file:// pages have the opaque origin "null").
	var log struct {
		Events []struct {
			Params struct {
				Initiator *string `json:"initiator"`
				URL       string  `json:"url"`
			} `json:"params"`
		} `json:"events"`
	}
	if err := json.Unmarshal([]byte(netlog), &log); err != nil {
		if err := json.Unmarshal([]byte(strings.TrimSuffix(strings.TrimSpace(netlog), ",")+"]}"), &log); err != nil {
			t.Fatalf("chromium's net log does not parse: %v", err)
		}
	}
	for _, e := range log.Events {
		p := e.Params
		if p.Initiator == nil || *p.Initiator == "not an origin" {
			continue
		}
		if !strings.HasPrefix(p.URL, "file://") {
			t.Errorf("the page (origin %s) made a request to %s", *p.Initiator, p.URL)
		}
	}
	if len(log.Events) == 0 {
		t.Error("chromium's net log holds no event: the test cannot tell whether a request left the page")
	}
}

// rpSections splits the browser's text of the page into record sections,
// keyed by record id.
func rpSections(dom string) map[string]string {
	out := map[string]string{}
	tag := regexp.MustCompile(`<[^>]*>`)
	open := regexp.MustCompile(`<section class="record" id="record-(.*?)-[0-9]+">`)
	for _, m := range open.FindAllStringSubmatchIndex(dom, -1) {
		// The anchor %XX-escapes every byte outside [A-Za-z0-9._-].
		id, err := url.PathUnescape(dom[m[2]:m[3]])
		if err != nil {
			id = dom[m[2]:m[3]]
		}
		body, _, _ := strings.Cut(dom[m[1]:], "</section>")
		out[id] += tag.ReplaceAllString(body, " ")
	}
	return out
}

// TestReportRealisticHistory writes the report of a realistic history and
// reads it in the browser: no request leaves the file, and its text names
// every removed tree with the proof that allowed it, the kept tree as kept,
// and the redacted report holds no home path, repository root, host name or
// credential.
func TestReportRealisticHistory(t *testing.T) {
	if !*updateReport {
		// Rewriting the history runs before the parallel tests, so
		// TestReportScreenshotGolden, in the same run, renders the new one.
		t.Parallel()
	}
	rpChromium(t) // no browser: skip before the history is made
	r, removed, kept, archive, abandoned, lost := rpHistory(t)
	page := filepath.Join(r.Root, "report.html")
	clitest.MustCustody(t, r, 0, "journal", "report", "-o", page)
	dom, _, netlog := rpBrowse(t, page)
	rpOffline(t, page, dom, netlog)
	secs := rpSections(dom)
	for id, kind := range removed {
		s, ok := secs[id]
		if !ok {
			t.Errorf("the report has no section for removed tree %s (sections: %v)", id, keys(secs))
			continue
		}
		for _, want := range []string{"tombstoned", "Proof: " + kind, "Removed at seq", "Plan: sha256:", "Fingerprint: sha256:", "Branch custody/" + id} {
			if !strings.Contains(s, want) {
				t.Errorf("section %s lacks %q:\n%s", id, want, s)
			}
		}
	}
	// The archive-backed removal names its archive and the proof, and the
	// archive's own section shows it sealed, the sole copy, then pruned.
	for id, kind := range removed {
		if kind != string(machine.ProofArchive) {
			continue
		}
		for _, want := range []string{"Proof: archive — ref " + archive, "Archive: " + archive + " holds this tree's unpublished work"} {
			if !strings.Contains(secs[id], want) {
				t.Errorf("the archive-backed removal %s lacks %q:\n%s", id, want, secs[id])
			}
		}
	}
	if s := secs[archive]; !strings.Contains(s, "(seal)") || !strings.Contains(s, "(sole-copy)") || !strings.Contains(s, "(pruned)") {
		t.Errorf("the archive's section does not show it sealed, the sole copy and pruned:\n%s", s)
	}
	for _, row := range []string{"archives sealed", "archives used as proof", "archives pruned"} {
		if !strings.Contains(dom, "<td>"+row+"</td><td class=\"mono\">1</td>") {
			t.Errorf("the summary does not count 1 for %q", row)
		}
	}
	if s := secs[abandoned]; !strings.Contains(s, "WITHOUT a proof") || !strings.Contains(s, "acknowledged commit "+lost) {
		t.Errorf("the abandoned tree's section does not mark it abandoned without a proof, with commit %s:\n%s", lost, s)
	}
	if !strings.Contains(dom, "<td>trees abandoned</td><td class=\"mono\">1</td>") {
		t.Errorf("the summary does not count the abandonment")
	}
	if s := secs[kept]; !strings.Contains(s, "finished") || strings.Contains(s, "Proof:") {
		t.Errorf("the kept tree's section should show it finished, with no proof:\n%s", s)
	}
	for id, sec := range secs {
		if strings.HasPrefix(id, "crash-") && !strings.Contains(id, "/") && !strings.Contains(sec, "(take-over)") {
			t.Errorf("the crashed removal's section does not show resume taking it over:\n%s", sec)
		}
	}
	for _, want := range []string{"Chain verified", "trees removed", "resources made", "resources destroyed", "interrupted intents resumed"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the page lacks %q", want)
		}
	}

	// --record: that record's section alone, its removal included.
	var anyRemoved string
	for id := range removed {
		anyRemoved = id
	}
	one := clitest.MustCustody(t, r, 0, "journal", "report", "--record", anyRemoved, "--format", "md").Stdout
	if n := strings.Count(one, "\n### "); n != 1 || !strings.Contains(one, "\n### "+anyRemoved+"\n") || !strings.Contains(one, "Proof: "+removed[anyRemoved]) {
		t.Errorf("report --record %s holds %d sections:\n%s", anyRemoved, n, one)
	}

	// The redacted report.
	plain, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"hunter2", "db.example.com", r.Dir} {
		if !strings.Contains(string(plain), w) {
			t.Fatalf("the unredacted report lacks %q: the redaction check would test nothing", w)
		}
	}
	red := filepath.Join(r.Root, "redacted.html")
	clitest.MustCustody(t, r, 0, "journal", "report", "--redact", "-o", red)
	b, err := os.ReadFile(red)
	if err != nil {
		t.Fatal(err)
	}
	rpNoIdentity(t, r, string(b))
	for _, w := range []string{"hunter2", "tok3n", "db.example.com"} {
		if strings.Contains(string(b), w) {
			t.Errorf("the redacted report holds %q", w)
		}
	}

	if *updateReport {
		exp := filepath.Join(r.Root, "history.jsonl")
		clitest.MustCustody(t, r, 0, "journal", "export", "--redact", "-o", exp)
		e, err := os.ReadFile(exp)
		if err != nil {
			t.Fatal(err)
		}
		rpNoIdentity(t, r, string(e))
		if err := os.WriteFile(filepath.Join("testdata", "report", "history.jsonl"), e, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// rpNoIdentity fails when text names the home directory, the repository
// root, the fixture's directory, this machine's host name or a credential.
func rpNoIdentity(t *testing.T, r *fixtures.Repo, text string) {
	t.Helper()
	home, _ := os.UserHomeDir()
	host, _ := os.Hostname()
	for what, v := range map[string]string{"repository root": r.Dir, "fixture directory": r.Root, "home": home, "temp dir": os.TempDir()} {
		if v != "" && v != "/" && strings.Contains(text, v) {
			t.Errorf("the redacted output holds the %s %s", what, v)
		}
	}
	if host != "" && regexp.MustCompile(`(^|[^A-Za-z0-9._-])`+regexp.QuoteMeta(host)+`([^A-Za-z0-9._-]|$)`).MatchString(
		strings.NewReplacer(`"host":`, "", "host ", "").Replace(text)) {
		t.Errorf("the redacted output holds the host name %q", host)
	}
	if machine.RedactCredentials(text) != text {
		t.Error("the redacted output holds a credential")
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestReportScreenshotGolden renders the checked-in realistic history
// (testdata/report/history.jsonl, a redacted export) and compares the
// browser's screenshot with the golden: at most rpMaxDiffer of the pixels
// may differ by more than rpChannel in any channel. The history's own
// timestamps, the fixed window and the page's named fonts make the render
// deterministic; the tolerance absorbs anti-aliasing, not a changed word
// in a line (about 0.02% of the page) twice over, nor any change of layout.
func TestReportScreenshotGolden(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	exp := filepath.Join("testdata", "report", "history.jsonl")
	if _, err := os.Stat(exp); err != nil {
		t.Fatalf("no checked-in history (run go test ./cmd/custody/e2e/report -run TestReportRealisticHistory -update-report): %v", err)
	}
	page := filepath.Join(dir, "history.html")
	r := fixtures.New(t, fixtures.Options{})
	abs, _ := filepath.Abs(exp)
	res := clitest.RunBin(t, clitest.Bin(), r, filepath.Dir(abs), nil, "journal", "report", "history.jsonl", "-o", page)
	if res.Code != 0 {
		t.Fatalf("report of the checked-in history: %s", res)
	}
	dom, shot, netlog := rpBrowse(t, page)
	rpOffline(t, page, dom, netlog)
	golden := filepath.Join("testdata", "report", "history.png")
	if *updateReport {
		f, err := os.Create(golden)
		if err != nil {
			t.Fatal(err)
		}
		if err := png.Encode(f, shot); err != nil {
			t.Fatal(err)
		}
		f.Close()
		return
	}
	f, err := os.Open(golden)
	if err != nil {
		t.Fatalf("no golden screenshot (run with -update-report): %v", err)
	}
	defer f.Close()
	want, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	frac := rpDiffer(shot, want)
	t.Logf("%.4f%% of the pixels differ from the golden", frac*100)
	if frac > rpMaxDiffer {
		if f, err := os.CreateTemp("", "custody-report-actual-*.png"); err == nil {
			png.Encode(f, shot)
			f.Close()
			t.Logf("the screenshot taken is at %s", f.Name())
		}
		t.Errorf("the screenshot differs from testdata/report/history.png in %.4f%% of its pixels (at most %.4f%% may); look at it, and if the change is meant, run with -update-report",
			frac*100, rpMaxDiffer*100)
	}
}

const (
	rpChannel   = 48     // of 255: a pixel differs when a channel is off by more
	rpMaxDiffer = 0.0005 // the fraction of pixels that may differ
)

// rpDiffer is the fraction of pixels of a and b (over the larger bounds)
// that differ by more than rpChannel in a channel; pixels outside either
// image differ.
func rpDiffer(a, b image.Image) float64 {
	ab, bb := a.Bounds(), b.Bounds()
	w, h := max(ab.Dx(), bb.Dx()), max(ab.Dy(), bb.Dy())
	differ := 0
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			pa, pb := image.Pt(ab.Min.X+x, ab.Min.Y+y), image.Pt(bb.Min.X+x, bb.Min.Y+y)
			if !pa.In(ab) || !pb.In(bb) {
				differ++
				continue
			}
			r1, g1, b1, _ := a.At(pa.X, pa.Y).RGBA()
			r2, g2, b2, _ := b.At(pb.X, pb.Y).RGBA()
			d := func(u, v uint32) bool {
				if u > v {
					u, v = v, u
				}
				return (v-u)>>8 > rpChannel
			}
			if d(r1, r2) || d(g1, g2) || d(b1, b2) {
				differ++
			}
		}
	}
	return float64(differ) / float64(w*h)
}

// TestReportTampered: a changed, dropped, inserted, reordered or
// duplicated-key export still gets its report, whose banner says the chain
// does not verify and names the first bad entry, and which exits 3; a
// wrong pinned head is refused (exit 1) and writes nothing.
func TestReportTampered(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{})
	clitest.MustCustody(t, r, 0, "init")
	for _, name := range []string{"a", "b", "c", "d"} {
		id, _ := clitest.NewTree(t, r, name)
		clitest.MustCustody(t, r, 0, "finish", id)
	}
	// Unredacted, so every entry's content is checked, not only its chain.
	b := []byte(clitest.MustCustody(t, r, 0, "journal", "export").Stdout)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	edit := func(f func(l []string) []string) string {
		return strings.Join(f(append([]string(nil), lines...)), "\n") + "\n"
	}
	cases := []struct {
		name, export, first string
	}{
		{"changed", edit(func(l []string) []string {
			l[4] = strings.Replace(l[4], `"outcome":"`, `"outcome":"forged `, 1)
			return l
		}), "entry seq 5 (line 5) was changed"},
		{"dropped", edit(func(l []string) []string { return append(l[:6], l[7:]...) }), "entry seq 8 (line 7) follows a gap"},
		{"inserted", edit(func(l []string) []string {
			return append(l[:3], append([]string{l[9]}, l[3:]...)...)
		}), "entry seq 10 (line 4)"},
		{"reordered", edit(func(l []string) []string { l[2], l[3] = l[3], l[2]; return l }), "entry seq 4 (line 3)"},
		{"duplicate_key", edit(func(l []string) []string {
			l[1] = strings.Replace(l[1], `{`, `{"record":"forged",`, 1)
			return l
		}), `line 2 repeats the member "record"`},
	}
	for _, tc := range cases {
		file := filepath.Join(r.Root, tc.name+".jsonl")
		if err := os.WriteFile(file, []byte(tc.export), 0o644); err != nil {
			t.Fatal(err)
		}
		page := filepath.Join(r.Root, tc.name+".html")
		res := clitest.RunBin(t, clitest.Bin(), r, r.Root, nil, "journal", "report", file, "-o", page)
		if res.Code != 3 {
			t.Errorf("%s: want exit 3 (written, does not verify), got %s", tc.name, res)
			continue
		}
		html, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		banner, _, _ := strings.Cut(stdhtml.UnescapeString(string(html)), "</div>")
		if !strings.Contains(banner, "The chain does NOT verify") || !strings.Contains(banner, tc.first) || !strings.Contains(banner, `class="banner bad"`) {
			t.Errorf("%s: the banner does not name the first bad entry (%q):\n%s", tc.name, tc.first, banner)
		}
		if !strings.Contains(string(html), `class="unverified"`) {
			t.Errorf("%s: no entry is marked unverified", tc.name)
		}
	}
	// The untampered export verifies, and a wrong head is refused.
	file := filepath.Join(r.Root, "good.jsonl")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(r.Root, "good.html")
	if res := clitest.RunBin(t, clitest.Bin(), r, r.Root, nil, "journal", "report", file, "-o", page); res.Code != 0 {
		t.Fatalf("the untampered export: %s", res)
	}
	wrong := filepath.Join(r.Root, "wrong.html")
	res := clitest.RunBin(t, clitest.Bin(), r, r.Root, nil, "journal", "report", file, "--head", strings.Repeat("ab", 32), "-o", wrong)
	if res.Code != 1 || !strings.Contains(res.Stderr, "journal-broken") && !strings.Contains(res.Stderr, "not at the head") {
		t.Errorf("a wrong head: want exit 1 naming the head, got %s", res)
	}
	if _, err := os.Stat(wrong); err == nil {
		t.Error("a refused report was written")
	}
}

// TestReportOfflineCheckIsHonest: the offline check fails a page that asks
// for something outside itself, both from its DOM and from the browser's
// net log (the image's request carries the page's origin).
func TestReportOfflineCheckIsHonest(t *testing.T) {
	t.Parallel()
	page := filepath.Join(t.TempDir(), "leaky.html")
	if err := os.WriteFile(page, []byte(`<!DOCTYPE html><html><body><p>hi</p><img alt="" src="http://report.invalid/pixel.png"></body></html>`), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, _, netlog := rpBrowse(t, page)
	var fake rpRecorder
	rpOfflineTo(&fake, page, dom, netlog)
	var sawDOM, sawRequest bool
	for _, m := range fake.errs {
		sawDOM = sawDOM || strings.Contains(m, "loads or links")
		sawRequest = sawRequest || strings.Contains(m, "made a request to http://report.invalid/pixel.png")
	}
	if !sawDOM || !sawRequest {
		t.Errorf("the offline check missed the leaky page (DOM %v, net log %v): %q", sawDOM, sawRequest, fake.errs)
	}
}
