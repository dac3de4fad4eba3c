//go:build linux

package deadline

// Every process custody starts has a deadline (decision 0224): a clean
// filter, an ssh or credential helper, a resource command that hangs ends
// at its deadline with everything it started, the tree it was observing is
// kept as observation-timed-out (or, for a remote, remote-unavailable),
// naming the command and the path, and the rest of the plan or apply goes
// on. The hanging commands here each start a child that holds the output
// pipe and wait for it, so the child must die with them; every pid they
// write is checked gone, with custody's own process group.

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
)

// otHang is a shell command that hangs: it starts a child that holds its
// output and waits for it, after writing both pids into pids.
func otHang(pids string) string {
	return fmt.Sprintf("sleep 1000 & echo $! >> %q; echo $$ >> %q; wait", pids, pids)
}

// otHangScript writes otHang(pids) as an executable script and returns its
// path.
func otHangScript(t *testing.T, dir, name, pids string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+otHang(pids)+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// otFilterTree makes tree's git status hang: a clean filter that hangs
// (otHang), applied by the tree's own untracked .gitattributes, and its
// README's mtime changed (same bytes), so git must run the filter to know.
func otFilterTree(t *testing.T, r *fixtures.Repo, tree, pids string) {
	t.Helper()
	r.Git("config", "filter.hang.clean", otHang(pids))
	r.WriteFile(tree, ".gitattributes", "* filter=hang\n")
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(tree, "README"), old, old); err != nil {
		t.Fatal(err)
	}
}

// otRun runs bin in r's main checkout in its own process group and waits
// at most a minute; it fails the test when the command is still running
// then, or when anything of its group or any pid written into pidFiles
// outlives it.
func otRun(t *testing.T, bin string, r *fixtures.Repo, extra []string, what string, pidFiles []string, args ...string) (clitest.Result, time.Duration) {
	t.Helper()
	b := otStart(t, bin, r, extra, args...)
	res, took := dlWaitExit(t, b, time.Minute, what)
	dlAssertNoLeftovers(t, b, pidFiles...)
	return res, took
}

// otStart starts bin in r's main checkout in its own process group.
func otStart(t *testing.T, bin string, r *fixtures.Repo, extra []string, args ...string) *clitest.Running {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = r.Dir
	cmd.Env = append(r.Env(), extra...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	b := &clitest.Running{Cmd: cmd, Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}
	cmd.Stdout, cmd.Stderr = b.Stdout, b.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
		}
	})
	return b
}

// otKillPids kills what a failed test may have left of the pids written
// into file.
func otKillPids(t *testing.T, file string) {
	t.Cleanup(func() {
		data, _ := os.ReadFile(file)
		for _, w := range strings.Fields(string(data)) {
			var pid int
			if _, err := fmt.Sscan(w, &pid); err == nil && pid > 1 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
}

// otItem returns plan item id.
func otItem(t *testing.T, items []machine.PlanItem, id string) machine.PlanItem {
	t.Helper()
	for _, it := range items {
		if it.ID == id {
			return it
		}
	}
	t.Fatalf("no plan item %s in %+v", id, items)
	return machine.PlanItem{}
}

// otWantTimedOut checks that ref is observation-timed-out for tree, names
// the git status command and the deadline, and retries plan (or what
// retry says) with a longer one.
func otWantTimedOut(t *testing.T, what string, ref *machine.Refusal, tree, deadline, retry string) {
	t.Helper()
	if ref == nil || ref.Code != machine.CodeObservationTimedOut || ref.Path != tree || ref.Retry != retry ||
		!strings.Contains(ref.Message, "observing "+tree+", git ") || !strings.Contains(ref.Message, " status "+machine.QuoteArg("--porcelain=v2")) ||
		!strings.Contains(ref.Message, "did not finish within "+deadline) {
		t.Errorf("%s: want observation-timed-out on %s naming git status and %s, retry %q; got %+v", what, tree, deadline, retry, ref)
	}
}

// TestPlanKeepsTreeWhoseFilterHangs: a repository's own clean filter
// hangs git status of one tree. custody plan --observe-timeout 2s ends in
// seconds, keeps that tree as observation-timed-out naming the status
// command and the tree, assesses the other tree normally (removable), and
// leaves neither the filter nor its child running. The plan applies: the
// other tree goes, the kept one is untouched.
func TestPlanKeepsTreeWhoseFilterHangs(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{})
	clitest.MustCustody(t, r, 0, "init")
	slowID, slow := clitest.NewTree(t, r, "slow")
	fineID, fine := clitest.NewTree(t, r, "fine")
	clitest.MustCustody(t, r, 0, "finish", slowID, fineID)
	pids := filepath.Join(r.Root, "filter-pids")
	otKillPids(t, pids)
	otFilterTree(t, r, slow, pids)
	file := filepath.Join(r.Root, "plan.json")
	res, took := otRun(t, clitest.Bin(), r, nil, "plan under a hanging clean filter", []string{pids},
		"--observe-timeout", "2s", "--json", "plan", "-o", file)
	if res.Code != 0 {
		t.Fatalf("plan: want exit 0 (a kept tree is the plan's result), got\n%s", res)
	}
	if took > 30*time.Second {
		t.Errorf("plan took %v with a 2s observation deadline", took.Round(time.Millisecond))
	}
	if data, _ := os.ReadFile(pids); len(strings.Fields(string(data))) < 2 {
		t.Fatalf("the filter never ran (pids %q): the test proves nothing", data)
	}
	items := clitest.DecodeResult[machine.Plan](t, res, "plan").Items
	kept := otItem(t, items, slowID)
	if kept.Action != machine.ActionKeep {
		t.Errorf("the tree whose filter hangs: action %s, want keep", kept.Action)
	}
	otWantTimedOut(t, "plan", kept.Refusal, slow, "2s", "custody --observe-timeout 8s plan")
	if len(kept.Refusals) != 1 {
		t.Errorf("the timed-out tree has %d refusals, want the timeout alone (status-failed is not repeated): %+v", len(kept.Refusals), kept.Refusals)
	}
	if it := otItem(t, items, fineID); it.Action != machine.ActionRemove {
		t.Errorf("the other tree: action %s, want remove (%+v)", it.Action, it.Refusal)
	}
	// The human view says why the tree is kept and what retries it.
	human := clitest.MustCustody(t, r, 0, "--observe-timeout", "1s", "plan")
	for _, want := range []string{"observation-timed-out", "custody --observe-timeout 4s plan", "did not finish within 1s"} {
		if !strings.Contains(human.Stdout, want) {
			t.Errorf("human plan lacks %q:\n%s", want, human.Stdout)
		}
	}
	ap := clitest.DecodeResult[steps.ApplyResult](t, clitest.MustCustody(t, r, 0, "apply", file, "--json"), "apply")
	if len(ap.Items) != 1 || ap.Items[0].ID != fineID || ap.Items[0].Outcome != machine.OutcomeRemoved {
		t.Errorf("apply: %+v, want %s removed alone", ap.Items, fineID)
	}
	if _, err := os.Lstat(fine); err == nil {
		t.Errorf("%s is still there after apply", fine)
	}
	if _, err := os.Lstat(filepath.Join(slow, "README")); err != nil {
		t.Errorf("the kept tree lost its file: %v", err)
	}
	clitest.MustCustody(t, r, 0, "doctor")
}

// TestApplyObservationTimesOut: plan proves a tree removable; by apply its
// git status hangs. Whether apply's first observation or its final one
// (after the removal intent, reached through a pause) runs out of time,
// the tree is kept with observation-timed-out, the record is finished and
// carries no intent, nothing of the tree is deleted, and nothing of the
// filter is left running.
func TestApplyObservationTimesOut(t *testing.T) {
	t.Parallel()
	for _, final := range []bool{false, true} {
		name := "first observation"
		if final {
			name = "final observation"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := fixtures.New(t, fixtures.Options{})
			clitest.MustCustody(t, r, 0, "init")
			id, tree := clitest.NewTree(t, r, "slow")
			clitest.MustCustody(t, r, 0, "finish", id)
			file := filepath.Join(r.Root, "plan.json")
			clitest.MustCustody(t, r, 0, "plan", "-o", file)
			pids := filepath.Join(r.Root, "filter-pids")
			otKillPids(t, pids)
			args := []string{"--observe-timeout", "2s", "--json", "apply", file}
			var res clitest.Result
			if !final {
				otFilterTree(t, r, tree, pids)
				res, _ = otRun(t, clitest.Bin(), r, nil, "apply under a hanging clean filter", []string{pids}, args...)
			} else {
				pause := t.TempDir()
				b := otStart(t, clitest.FailpointBin(), r, []string{"CUSTODY_PAUSE=apply/after-intent", "CUSTODY_PAUSE_DIR=" + pause}, args...)
				clitest.WaitFile(t, filepath.Join(pause, "paused"), 30*time.Second)
				if rec := clitest.ListRecord(t, r, id); rec.Intent == nil || rec.Intent.Kind != machine.IntentRemoval {
					t.Fatalf("paused after the intent, the record carries %+v, want a removal intent", rec.Intent)
				}
				otFilterTree(t, r, tree, pids)
				if err := os.WriteFile(filepath.Join(pause, "go"), nil, 0o644); err != nil {
					t.Fatal(err)
				}
				res, _ = dlWaitExit(t, b, time.Minute, "apply whose final observation hangs")
				dlAssertNoLeftovers(t, b, pids)
			}
			if data, _ := os.ReadFile(pids); len(strings.Fields(string(data))) < 2 {
				t.Fatalf("the filter never ran (pids %q): the test proves nothing\n%s", data, res)
			}
			if res.Code != 3 {
				t.Fatalf("apply: want exit 3 (refused), got\n%s", res)
			}
			ap := clitest.DecodeResult[steps.ApplyResult](t, res, "apply")
			if len(ap.Items) != 1 || ap.Items[0].Outcome != machine.OutcomeRefused {
				t.Fatalf("apply items: %+v, want one refused", ap.Items)
			}
			otWantTimedOut(t, "apply", ap.Items[0].Refusal, tree, "2s", "custody --observe-timeout 8s plan")
			if rec := clitest.ListRecordWithin(t, r, id, time.Second); rec.State != machine.StateFinished || rec.Intent != nil {
				t.Errorf("after apply the record is %s with intent %+v, want finished without one", rec.State, rec.Intent)
			}
			for _, f := range []string{"README", ".gitattributes", ".git"} {
				if _, err := os.Lstat(filepath.Join(tree, f)); err != nil {
					t.Errorf("apply deleted %s of the kept tree: %v", f, err)
				}
			}
			if !strings.Contains(r.Git("worktree", "list", "--porcelain"), "worktree "+tree+"\n") {
				t.Errorf("git no longer registers %s", tree)
			}
			clitest.MustCustody(t, r, 0, "doctor")
		})
	}
}

// TestResumeObservationTimesOut: a removal interrupted right after its
// intent is resumed while the tree's git status hangs. Resume cannot tell
// whether the interrupted run removed anything, so it keeps the intent
// and refuses with observation-timed-out, retried by resume with a longer
// deadline; nothing of the tree is deleted, nothing of the filter is left.
// Once the filter answers, resume settles the intent.
func TestResumeObservationTimesOut(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{})
	clitest.MustCustody(t, r, 0, "init")
	id, tree := clitest.NewTree(t, r, "slow")
	clitest.MustCustody(t, r, 0, "finish", id)
	file := filepath.Join(r.Root, "plan.json")
	clitest.MustCustody(t, r, 0, "plan", "-o", file)
	if res := clitest.RunBin(t, clitest.FailpointBin(), r, r.Dir, []string{"CUSTODY_FAILPOINT=apply/after-intent"}, "apply", file); res.Code != -1 {
		t.Fatalf("apply with the failpoint: want it killed, got\n%s", res)
	}
	pids := filepath.Join(r.Root, "filter-pids")
	otKillPids(t, pids)
	otFilterTree(t, r, tree, pids)
	res, _ := otRun(t, clitest.Bin(), r, nil, "resume under a hanging clean filter", []string{pids}, "--observe-timeout", "2s", "--json", "resume")
	if data, _ := os.ReadFile(pids); len(strings.Fields(string(data))) < 2 {
		t.Fatalf("the filter never ran (pids %q): the test proves nothing\n%s", data, res)
	}
	if res.Code != 3 {
		t.Fatalf("resume: want exit 3, got\n%s", res)
	}
	items := clitest.DecodeResult[steps.ResumeResult](t, res, "resume").Items
	if len(items) != 1 || items[0].Outcome != machine.OutcomeRefused {
		t.Fatalf("resume items: %+v, want one refused", items)
	}
	otWantTimedOut(t, "resume", items[0].Refusal, tree, "2s", "custody --observe-timeout 8s resume")
	if rec := clitest.ListRecordWithin(t, r, id, time.Second); rec.State != machine.StateRemoving || rec.Intent == nil {
		t.Errorf("after the refused resume the record is %s with intent %+v, want removing with its intent", rec.State, rec.Intent)
	}
	if _, err := os.Lstat(filepath.Join(tree, "README")); err != nil {
		t.Errorf("resume deleted part of the tree: %v", err)
	}
	r.Git("config", "--unset", "filter.hang.clean")
	if err := os.Remove(filepath.Join(tree, ".gitattributes")); err != nil {
		t.Fatal(err)
	}
	clitest.MustCustody(t, r, 0, "resume")
	if rec := clitest.ListRecord(t, r, id); rec.Intent != nil {
		t.Errorf("once the filter is gone, resume still leaves %+v", rec.Intent)
	}
	clitest.MustCustody(t, r, 0, "doctor")
}

// TestPlanRemoteHangs: a remote whose ssh, or whose credential helper,
// never answers is ended at --remote-timeout with everything it started;
// the tree only it could prove is kept as remote-unavailable, naming the
// remote and the time it had, and the tree the other remote proves is
// removable, in seconds.
func TestPlanRemoteHangs(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"ssh", "credential-helper"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			r := fixtures.New(t, fixtures.Options{})
			pids := filepath.Join(r.Root, how+"-pids")
			otKillPids(t, pids)
			hang := otHangScript(t, r.Root, how+"-hang", pids)
			switch how {
			case "ssh":
				r.Git("remote", "add", "slow", "ssh://custody.invalid/slow.git")
				r.Git("config", "core.sshCommand", hang)
			case "credential-helper":
				// A server that wants credentials for everything: git asks
				// its credential helper, which never answers.
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
					w.Header().Set("WWW-Authenticate", `Basic realm="custody"`)
					http.Error(w, "who are you", http.StatusUnauthorized)
				}))
				t.Cleanup(srv.Close)
				r.Git("remote", "add", "slow", srv.URL+"/slow.git")
				r.Git("config", "credential.helper", "!"+hang)
			}
			clitest.MustCustody(t, r, 0, "init")
			pushedID, _ := clitest.NewTree(t, r, "pushed")
			aheadID, ahead := clitest.NewTree(t, r, "ahead")
			r.WriteFile(ahead, "work.txt", "mine\n")
			r.CommitAll(ahead, "work only the slow remote could hold")
			clitest.MustCustody(t, r, 0, "finish", pushedID, aheadID)
			res, took := otRun(t, clitest.Bin(), r, nil, "plan with a hanging remote", []string{pids},
				"--remote-timeout", "2s", "--json", "plan")
			if res.Code != 0 {
				t.Fatalf("plan: %s", res)
			}
			if took > 30*time.Second {
				t.Errorf("plan took %v with a 2s remote deadline", took.Round(time.Millisecond))
			}
			if data, _ := os.ReadFile(pids); len(strings.Fields(string(data))) < 2 {
				t.Fatalf("the %s never ran (pids %q): the test proves nothing\n%s", how, data, res)
			}
			items := clitest.DecodeResult[machine.Plan](t, res, "plan").Items
			if it := otItem(t, items, pushedID); it.Action != machine.ActionRemove {
				t.Errorf("the tree origin proves: %s %+v, want remove", it.Action, it.Refusal)
			}
			it := otItem(t, items, aheadID)
			if it.Action != machine.ActionKeep || it.Refusal == nil || it.Refusal.Code != machine.CodeRemoteUnavailable ||
				!strings.Contains(it.Refusal.Message, "remote slow did not answer") || !strings.Contains(it.Refusal.Message, "ls-remote") ||
				!strings.Contains(it.Refusal.Message, "no answer within 2s") {
				t.Errorf("the tree only the slow remote could prove: %s %+v, want remote-unavailable naming slow, ls-remote and 2s", it.Action, it.Refusal)
			}
		})
	}
}

// TestGitIsNeverToldToRunWhatItNeedNot: an fsmonitor hook, a textconv
// driver and external diffs that would hang are configured for the
// repository and its trees; custody's observations run none of them (git
// status with core.fsmonitor=false, diffs with --no-textconv and
// --no-ext-diff; no git asks an fsmonitor, which git would do whenever it
// reads an index, even for a proof's diff-tree), so plan assesses in
// seconds a tree whose file's stat changed and one whose commit was
// published as another commit (its proof compares patches), and nothing
// ran. (The 20s deadline only makes a regression fail fast, naming the
// command that ran one.)
func TestGitIsNeverToldToRunWhatItNeedNot(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{})
	r.WriteFile(r.Dir, ".gitattributes", "* diff=hang\n")
	r.CommitAll(r.Dir, "attributes")
	r.Git("push", "-q", "origin", "main")
	clitest.MustCustody(t, r, 0, "init")
	statID, stat := clitest.NewTree(t, r, "stat")
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(stat, "README"), old, old); err != nil {
		t.Fatal(err)
	}
	workID, work := clitest.NewTree(t, r, "work")
	r.WriteFile(work, "work.txt", "mine\n")
	r.CommitAll(work, "work")
	// Published as another commit with the same change: main moved on
	// first, so the cherry-pick has another parent.
	r.WriteFile(r.Dir, "other.txt", "other\n")
	r.CommitAll(r.Dir, "other")
	r.Git("cherry-pick", r.GitIn(work, "rev-parse", "HEAD"))
	r.Git("push", "-q", "origin", "main")
	clitest.MustCustody(t, r, 0, "finish", statID, workID)
	// Only now: git add and commit above would run the fsmonitor hook.
	pids := filepath.Join(r.Root, "hook-pids")
	otKillPids(t, pids)
	hang := otHangScript(t, r.Root, "hang", pids)
	r.Git("config", "core.fsmonitor", hang)
	r.Git("config", "diff.hang.textconv", hang)
	r.Git("config", "diff.hang.command", hang)
	r.Git("config", "diff.external", hang)
	res, took := otRun(t, clitest.Bin(), r, nil, "plan beside hanging hooks", []string{pids}, "--observe-timeout", "20s", "--json", "plan")
	if res.Code != 0 || took > 45*time.Second {
		t.Fatalf("plan took %v: %s", took.Round(time.Millisecond), res)
	}
	items := clitest.DecodeResult[machine.Plan](t, res, "plan").Items
	for _, id := range []string{statID, workID} {
		if it := otItem(t, items, id); it.Action != machine.ActionRemove {
			t.Errorf("%s: %s %+v, want remove", id, it.Action, it.Refusal)
		}
	}
	if it := otItem(t, items, workID); it.Proof == nil || it.Proof.Kind == machine.ProofAncestry {
		t.Errorf("the tree published as another commit: proof %+v, want one that compares patches", it.Proof)
	}
	if data, err := os.ReadFile(pids); err == nil {
		t.Errorf("git ran a hook custody's observations turn off (pids %q)", data)
	}
}

// TestResourceCommandsHang: a resource's ensure, and its destroy when
// apply removes its tree, hang; each ends at the resource's timeout with
// everything it started, is reported failed naming the time it had, and
// the rest goes on: the tree is removed, the entry kept for a retry.
func TestResourceCommandsHang(t *testing.T) {
	t.Parallel()
	w := clitest.SetupResources(t, "", fixtures.Options{})
	pids := filepath.Join(w.Ext, "pids")
	otKillPids(t, pids)
	clitest.WriteTrusted(t, w.R, w.Expand("[resources.db]\ncreate = '''mkdir {EXT}/@resource@'''\n"+
		"ensure = '''"+otHang(pids)+"'''\ndestroy = '''"+otHang(pids)+"'''\ntimeout = \"1s\"\n"))
	made := w.New(t, "slow")
	res, took := otRun(t, clitest.Bin(), w.R, nil, "resource ensure that hangs", []string{pids}, "resource", "ensure", made.ID, "--json")
	if took > 20*time.Second {
		t.Errorf("resource ensure took %v with a 1s timeout", took.Round(time.Millisecond))
	}
	ens := clitest.DecodeResult[clitest.EnsureResult](t, res, "resource ensure")
	if res.Code != 3 || len(ens.Resources) != 1 || ens.Resources[0].Refusal == nil ||
		!strings.Contains(ens.Resources[0].Refusal.Message, "no answer within 1s") {
		t.Errorf("ensure that hangs: want exit 3 and a refusal naming the 1s it had, got %+v\n%s", ens, res)
	}
	clitest.MustCustody(t, w.R, 0, "finish", made.ID)
	file := filepath.Join(w.R.Root, "plan.json")
	clitest.MustCustody(t, w.R, 0, "plan", "-o", file)
	before, _ := os.ReadFile(pids)
	res, took = otRun(t, clitest.Bin(), w.R, nil, "apply whose destroy hangs", []string{pids}, "apply", file, "--json")
	if took > 30*time.Second {
		t.Errorf("apply took %v with a 1s resource timeout", took.Round(time.Millisecond))
	}
	if after, _ := os.ReadFile(pids); len(after) <= len(before) {
		t.Fatalf("the destroy never ran: the test proves nothing\n%s", res)
	}
	ap := clitest.DecodeResult[steps.ApplyResult](t, res, "apply")
	if len(ap.Items) != 1 || ap.Items[0].Outcome != machine.OutcomeRemoved || len(ap.Items[0].Resources) != 1 {
		t.Fatalf("apply: %+v\n%s", ap, res)
	}
	if o := ap.Items[0].Resources[0]; o.Refusal == nil || !strings.Contains(o.Refusal.Message, "no answer within 1s") {
		t.Errorf("the destroy that hung: %+v, want a refusal naming the 1s it had", o)
	}
	if e := w.Entry(t, made.ID+"/db"); e.State == machine.StateTombstoned {
		t.Errorf("the entry whose destroy hung is tombstoned: %+v", e)
	}
	if _, err := os.Lstat(made.Path); err == nil {
		t.Errorf("the tree is still there")
	}
}
