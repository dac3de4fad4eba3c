//go:build unix

package agent

// The Codex app's own worktrees: plain `git worktree add` trees outside
// the repository (under $CODEX_HOME/worktrees), in which the app runs the
// literal [setup] and [cleanup] scripts custody wrote. Helpers are
// prefixed ca.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/cmd/custody/internal/output"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/agents"
	"github.com/custody-sh/custody/steps/resource"
	"github.com/google/go-cmp/cmp"
)

// caAppTree makes a tree as the Codex app does: `git worktree add` of this
// repository at $CODEX_HOME/worktrees/<hash>/<repository name>, outside
// the repository and the managed root. branch "" makes it detached.
func caAppTree(t *testing.T, w *clitest.World, hash, branch string) string {
	t.Helper()
	path := filepath.Join(w.Ext, "codex-home", "worktrees", hash, filepath.Base(w.R.Dir))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if branch == "" {
		w.R.Git("worktree", "add", "-q", "--detach", path, "HEAD")
	} else {
		w.R.Git("worktree", "add", "-q", "-b", branch, path, "HEAD")
	}
	return path
}

// caShow is custody show ID --json.
func caShow(t *testing.T, w *clitest.World, id string) output.ShowResult {
	t.Helper()
	return clitest.ShowRecord(t, w.R, id)
}

// caLedger is the worktree's ledger entries as "id state handle".
func caLedger(t *testing.T, w *clitest.World, id string) []string {
	t.Helper()
	var out []string
	for _, r := range w.Ledger(t, true) {
		if r.Worktree == id {
			out = append(out, r.ID+" "+string(r.State)+" "+r.Handle)
		}
	}
	return out
}

// caIntegrate writes environment.toml and returns its literal scripts.
func caIntegrate(t *testing.T, w *clitest.World) (setup, cleanup string) {
	t.Helper()
	clitest.MustCustody(t, w.R, 0, "integrate", "codex")
	setup, cleanup = cxScripts(t, filepath.Join(w.R.Dir, ".codex", "environments", "environment.toml"))
	if setup != agents.CodexSetupScript || cleanup != agents.CodexCleanupScript {
		t.Fatalf("scripts written: setup %q cleanup %q", setup, cleanup)
	}
	return setup, cleanup
}

// TestCodexSetupAdoptsTheAppsTree: in a tree the app made, the literal
// setup script puts the tree in custody (adopted, under git's admin key)
// and creates its declared resources under their create intents; run
// again it changes nothing (already-done; the resources are only
// ensured); the literal cleanup script destroys them; the tree, its branch
// and its record stay.
func TestCodexSetupAdoptsTheAppsTree(t *testing.T) {
	t.Parallel()
	w := clitest.SetupResources(t, clitest.ResourceDecl("db", "", "")+clitest.ResourceDecl("cache", "", ""), fixtures.Options{})
	setup, cleanup := caIntegrate(t, w)
	tree := caAppTree(t, w, "a1b2", "")
	id := filepath.Base(tree) // git's admin key
	db, cache := w.Handle(id, "db"), w.Handle(id, "cache")

	sh := cxRun(t, w, tree, setup)
	if sh.Code != 0 {
		t.Fatalf("the setup script %q failed in the app's tree:\n%s", setup, sh)
	}
	if !strings.Contains(sh.Stdout, "adopted "+tree+" as "+id+"\n") {
		t.Errorf("setup does not say it adopted the tree:\n%s", sh)
	}
	w.WantLog(t, "create "+db, "create "+cache)
	rec := caShow(t, w, id).Record
	if rec.Origin != machine.OriginAdopted || rec.State != machine.StateActive || rec.Path != tree || rec.AdminKey != id || rec.Port == 0 {
		t.Fatalf("the app's tree after setup: %+v", rec)
	}
	wantLedger := []string{id + "/cache active " + cache, id + "/db active " + db}
	if d := cmp.Diff(wantLedger, caLedger(t, w, id)); d != "" {
		t.Errorf("ledger after setup (-want +got):\n%s", d)
	}
	// Each resource was made under its own create intent, as new makes it.
	var intents []string
	for _, e := range w.Journal(t) {
		if e.Kind == string(machine.KindResource) && e.Trigger == string(machine.TriggerDeclare) {
			intents = append(intents, e.Record)
		}
	}
	if d := cmp.Diff([]string{id + "/db", id + "/cache"}, intents); d != "" {
		t.Errorf("create intents journaled (-want +got):\n%s", d)
	}
	env, err := os.ReadFile(filepath.Join(tree, ".env"))
	if err != nil || !strings.Contains(string(env), db) || !strings.Contains(string(env), cache) {
		t.Errorf("the tree's .env does not name its resources (%v):\n%s", err, env)
	}

	// Setup again: nothing changes; the resources are only ensured.
	again := cxRun(t, w, tree, setup)
	if again.Code != 0 || !strings.Contains(again.Stdout, "already-done: "+tree+" is in custody as "+id+"\n") {
		t.Fatalf("setup run again:\n%s", again)
	}
	w.WantLog(t, "create "+db, "create "+cache, "ensure "+db, "ensure "+cache)
	if d := cmp.Diff(wantLedger, caLedger(t, w, id)); d != "" {
		t.Errorf("ledger after the second setup (-want +got):\n%s", d)
	}
	if now := caShow(t, w, id).Record; now.Rev != rec.Rev || now.State != rec.State {
		t.Errorf("the second setup changed the record: rev %d -> %d, %s -> %s", rec.Rev, now.Rev, rec.State, now.State)
	}
	if n := len(clitest.ListRecords(t, w.R, true)); n != 1 {
		t.Errorf("%d records after two setups, want 1", n)
	}

	down := cxRun(t, w, tree, cleanup)
	if down.Code != 0 {
		t.Fatalf("the cleanup script %q failed in the app's tree:\n%s", cleanup, down)
	}
	w.WantLog(t, "create "+db, "create "+cache, "ensure "+db, "ensure "+cache, "destroy "+cache, "destroy "+db)
	if w.Exists(t, db) || w.Exists(t, cache) {
		t.Errorf("cleanup left a resource behind")
	}
	if d := cmp.Diff([]string{id + "/cache tombstoned " + cache, id + "/db tombstoned " + db}, caLedger(t, w, id)); d != "" {
		t.Errorf("ledger after cleanup (-want +got):\n%s", d)
	}
	if st := caShow(t, w, id).Record.State; st != machine.StateActive {
		t.Errorf("cleanup moved the record to %s; the tree and its record are the app's and a plan's to retire", st)
	}
	// A destroyed resource is not made again by a later setup.
	if sh := cxRun(t, w, tree, setup); sh.Code != 0 {
		t.Fatalf("setup after cleanup:\n%s", sh)
	}
	w.WantLog(t, "create "+db, "create "+cache, "ensure "+db, "ensure "+cache, "destroy "+cache, "destroy "+db)
}

// TestCodexSetupInACustodyTreeOnlyEnsures: in a tree custody new made, the
// setup script adopts nothing and creates nothing: it ensures.
func TestCodexSetupInACustodyTreeOnlyEnsures(t *testing.T) {
	t.Parallel()
	w := clitest.SetupResources(t, clitest.ResourceDecl("db", "", ""), fixtures.Options{})
	setup, _ := caIntegrate(t, w)
	made := w.New(t, "mine")
	db := w.Handle(made.ID, "db")
	before := caShow(t, w, made.ID).Record
	sh := cxRun(t, w, filepath.Join(made.Path), setup)
	if sh.Code != 0 || !strings.Contains(sh.Stdout, "already-done: "+made.Path+" is in custody as "+made.ID+"\n") {
		t.Fatalf("setup in a custody tree:\n%s", sh)
	}
	w.WantLog(t, "create "+db, "ensure "+db)
	after := caShow(t, w, made.ID).Record
	if after.Origin != machine.OriginCreated || after.Rev != before.Rev {
		t.Errorf("setup changed the custody tree's record: %+v -> %+v", before, after)
	}
	if n := len(clitest.ListRecords(t, w.R, true)); n != 1 {
		t.Errorf("%d records, want 1", n)
	}
}

// TestCodexSetupRefusesUntrustedConfig: an unapproved custody.toml makes
// nothing: the tree is adopted (protection only), the resources are
// refused with config-untrusted and exit 1; once approved, setup makes them.
func TestCodexSetupRefusesUntrustedConfig(t *testing.T) {
	t.Parallel()
	w := clitest.SetupResources(t, "", fixtures.Options{})
	setup, _ := caIntegrate(t, w)
	w.R.WriteFile(w.R.Dir, "custody.toml", w.Expand(clitest.ResourceDecl("db", "", "")))
	tree := caAppTree(t, w, "c3d4", "")
	id := filepath.Base(tree)
	sh := cxRun(t, w, tree, setup)
	if sh.Code != 1 || !strings.Contains(sh.Stderr, "[config-untrusted]") {
		t.Fatalf("setup with an unapproved custody.toml:\n%s", sh)
	}
	w.WantLog(t)
	if rec := caShow(t, w, id).Record; rec.Origin != machine.OriginAdopted {
		t.Errorf("the tree was not adopted: %+v", rec)
	}
	clitest.MustCustody(t, w.R, 0, "trust")
	if sh := cxRun(t, w, tree, setup); sh.Code != 0 {
		t.Fatalf("setup once approved:\n%s", sh)
	}
	w.WantLog(t, "create "+w.Handle(id, "db"))
}

// TestCodexAdoptedTreeRetiredByPlan: after setup and cleanup, a finished
// app tree is removed by a reviewed plan only with its proof (here its
// HEAD is published) and with --allow-external-retirement, and its branch
// stays; an app tree with an unpublished commit is kept.
func TestCodexAdoptedTreeRetiredByPlan(t *testing.T) {
	t.Parallel()
	w := clitest.SetupResources(t, clitest.ResourceDecl("db", "", ""), fixtures.Options{})
	setup, cleanup := caIntegrate(t, w)
	done := caAppTree(t, w, "e5f6", "codex/done")
	wip := caAppTree(t, w, "a7b8", "")
	for _, tree := range []string{done, wip} {
		if sh := cxRun(t, w, tree, setup); sh.Code != 0 {
			t.Fatalf("setup in %s:\n%s", tree, sh)
		}
	}
	doneID := caShow(t, w, filepath.Base(done)).Record.ID
	var wipID string
	for _, r := range clitest.ListRecords(t, w.R, false) {
		if r.Path == wip {
			wipID = r.ID
		}
	}
	if wipID == "" || wipID == doneID {
		t.Fatalf("the second app tree has no record of its own: %+v", clitest.ListRecords(t, w.R, false))
	}
	w.R.Commit(wip, "wip.txt", "not published\n")
	tip := strings.TrimSpace(w.R.Git("rev-parse", "refs/heads/codex/done"))
	for _, tree := range []string{done, wip} {
		if sh := cxRun(t, w, tree, cleanup); sh.Code != 0 {
			t.Fatalf("cleanup in %s:\n%s", tree, sh)
		}
	}
	clitest.MustCustody(t, w.R, 0, "finish", doneID, wipID)
	plan, file := clitest.PlanNow(t, w.R, 0)
	if it := clitest.PlanItem(t, plan, doneID); it.Action != machine.ActionRemove {
		t.Fatalf("plan of the published app tree: %+v", it)
	}
	if it := clitest.PlanItem(t, plan, wipID); it.Action != machine.ActionKeep {
		t.Fatalf("plan of the app tree with an unpublished commit: %+v", it)
	}
	res := clitest.RunBin(t, clitest.Bin(), w.R, w.R.Dir, nil, "apply", "--allow-external-retirement", file, "--json")
	if res.Code != 0 {
		t.Fatalf("apply: %s", res)
	}
	if o := clitest.ApplyOutcome(t, clitest.DecodeResult[steps.ApplyResult](t, res, "apply"), doneID); o.Outcome != machine.OutcomeRemoved {
		t.Fatalf("apply of the published app tree: %+v", o)
	}
	if _, err := os.Lstat(done); !os.IsNotExist(err) {
		t.Errorf("%s: %v, want removed", done, err)
	}
	if got := strings.TrimSpace(w.R.Git("rev-parse", "--verify", "refs/heads/codex/done")); got != tip {
		t.Errorf("the adopted tree's branch is %q, want it kept at %s", got, tip)
	}
	if _, err := os.Lstat(filepath.Join(wip, "wip.txt")); err != nil {
		t.Errorf("the kept app tree lost its work: %v", err)
	}
}

// TestCodexSetupAfterTheAppReusedAnAdminKey: git names a new tree's admin
// entry after its directory, so the app's next tree gets the admin key of
// one it removed; its record is retired, and setup adopts the new tree
// under a fresh record id (custody never reuses one) with its own
// resources.
func TestCodexSetupAfterTheAppReusedAnAdminKey(t *testing.T) {
	t.Parallel()
	w := clitest.SetupResources(t, clitest.ResourceDecl("db", "", ""), fixtures.Options{})
	setup, cleanup := caIntegrate(t, w)
	first, key := caAppTreeUsed(t, w, setup, cleanup)
	// The app removes the tree; a plan retires its record.
	w.R.Git("worktree", "remove", first)
	clitest.MustCustody(t, w.R, 0, "finish", key)
	_, file := clitest.PlanNow(t, w.R, 0)
	if res := clitest.RunBin(t, clitest.Bin(), w.R, w.R.Dir, nil, "apply", "--allow-external-retirement", file); res.Code != 0 {
		t.Fatalf("apply: %s", res)
	}
	if st := clitest.ListRecord(t, w.R, key).State; st != machine.StateTombstoned {
		t.Fatalf("the first tree's record is %s, want tombstoned", st)
	}

	second := caAppTreeReusing(t, w, key)
	sh := cxRun(t, w, second, setup)
	if sh.Code != 0 {
		t.Fatalf("setup in the second tree:\n%s", sh)
	}
	id := caRecordAt(t, w, second)
	if id == "" || id == key || !strings.HasPrefix(id, key+"-") {
		t.Fatalf("the second tree's record id is %q, want %s-<hex>", id, key)
	}
	if rec := caShow(t, w, id).Record; rec.AdminKey != key || rec.Origin != machine.OriginAdopted {
		t.Errorf("the second tree's record: %+v", rec)
	}
	if !w.Exists(t, w.Handle(id, "db")) {
		t.Errorf("the second tree's resource was not made")
	}
}

// TestCodexSetupKilledAfterACreateIntent: setup killed between the first
// resource's create intent and its create is converged by the next setup
// as custody new is by resume: the interrupted create undone and redone,
// the rest made once, no intent left.
func TestCodexSetupKilledAfterACreateIntent(t *testing.T) {
	t.Parallel()
	w := clitest.SetupResources(t, clitest.ResourceDecl("a", "", "")+clitest.ResourceDecl("b", "", ""), fixtures.Options{})
	setup, _ := caIntegrate(t, w)
	tree := caAppTree(t, w, "dead", "")
	id := filepath.Base(tree)
	ha, hb := w.Handle(id, "a"), w.Handle(id, "b")
	clitest.RunBin(t, clitest.Bin(), w.R, tree, nil, "adopt", "--if-needed")
	res := clitest.RunBin(t, clitest.FailpointBin(), w.R, tree, []string{"CUSTODY_FAILPOINT=resource/after-create-intent"}, "resource", "ensure")
	if res.Code != -1 {
		t.Fatalf("resource ensure with the failpoint: want SIGKILL, got\n%s", res)
	}
	if e := w.Entry(t, id+"/a"); e.State != machine.StateProvisioning || e.Intent == nil || e.Intent.Kind != machine.IntentResourceCreate {
		t.Fatalf("the create intent was not durable before the kill: %+v", e)
	}
	w.WantLog(t) // the create never ran

	if sh := cxRun(t, w, tree, setup); sh.Code != 0 {
		t.Fatalf("setup after the kill:\n%s", sh)
	}
	w.WantLog(t, "destroy "+ha, "create "+ha, "create "+hb, "ensure "+ha)
	if d := cmp.Diff([]string{id + "/a active " + ha, id + "/b active " + hb}, caLedger(t, w, id)); d != "" {
		t.Errorf("ledger after the next setup (-want +got):\n%s", d)
	}
	for _, r := range w.Ledger(t, true) {
		if r.Intent != nil {
			t.Errorf("%s still carries an intent: %+v", r.ID, r.Intent)
		}
	}
	w.NoIntents(t)
}

// TestCodexSetupRequiredResourceFails: a required resource whose create
// fails stops the provisioning of an adopted tree (exit 3, resource-failed,
// the later resource not made) and leaves the tree as it is; the next
// setup says so again instead of going quiet; the refusal's retry, pasted,
// destroys what was made.
func TestCodexSetupRequiredResourceFails(t *testing.T) {
	t.Parallel()
	w := clitest.SetupResources(t, clitest.ResourceDecl("a", "echo create @resource@ >> {EXT}/log; exit 7", "")+clitest.ResourceDecl("b", "", ""), fixtures.Options{})
	setup, _ := caIntegrate(t, w)
	tree := caAppTree(t, w, "bad1", "")
	id := filepath.Base(tree)
	ha := w.Handle(id, "a")
	for run := 1; run <= 2; run++ {
		sh := cxRun(t, w, tree, setup)
		if sh.Code != 3 || !strings.Contains(sh.Stdout, "[resource-failed]") || !strings.Contains(sh.Stdout, "exited 7") {
			t.Fatalf("setup run %d with a failing required resource:\n%s", run, sh)
		}
		w.WantLog(t, "create "+ha)
	}
	if d := cmp.Diff([]string{id + "/a finished " + ha}, caLedger(t, w, id)); d != "" {
		t.Errorf("ledger (-want +got):\n%s", d)
	}
	if _, err := os.Lstat(filepath.Join(tree, ".git")); err != nil {
		t.Errorf("the app's tree was touched: %v", err)
	}
	out := clitest.DecodeResult[resource.EnsureResult](t, clitest.RunBin(t, clitest.Bin(), w.R, tree, nil, "resource", "ensure", "--json"), "resource ensure")
	if len(out.Resources) != 1 || out.Resources[0].Refusal == nil {
		t.Fatalf("ensure: %+v", out)
	}
	retry := out.Resources[0].Refusal.Retry
	if want := "custody -C " + machine.QuoteArg(tree) + " teardown"; retry != want {
		t.Fatalf("retry %q, want %q", retry, want)
	}
	if sh := clitest.RunBin(t, "sh", w.R, w.R.Dir, []string{clitest.PathEnv(filepath.Dir(clitest.Bin()))}, "-c", retry); sh.Code != 0 {
		t.Fatalf("the retry %q:\n%s", retry, sh)
	}
	w.WantLog(t, "create "+ha, "destroy "+ha)
	if d := cmp.Diff([]string{id + "/a tombstoned " + ha}, caLedger(t, w, id)); d != "" {
		t.Errorf("ledger after the retry (-want +got):\n%s", d)
	}
}

// TestCodexSetupWhileTheEarlierRecordLives: the app removed its first tree
// and made a second one under the same admin key while the first tree's
// record is still live (nobody finished it). The second tree's setup adopts
// it under a new id instead of being refused: the first tree is gone from
// its path and the admin entry no longer holds its marker, so the second
// tree is not the first one moved. The first record is then never taken
// for a move into the second tree (whose advice would move the wrong
// tree); plan settles it as gone, and the second tree stays untouched.
func TestCodexSetupWhileTheEarlierRecordLives(t *testing.T) {
	t.Parallel()
	w := clitest.SetupResources(t, clitest.ResourceDecl("db", "", ""), fixtures.Options{})
	setup, cleanup := caIntegrate(t, w)
	first, key := caAppTreeUsed(t, w, setup, cleanup)
	w.R.Git("worktree", "remove", first)

	second := caAppTreeReusing(t, w, key)
	if sh := cxRun(t, w, second, setup); sh.Code != 0 {
		t.Fatalf("setup in the second tree while the first record lives:\n%s", sh)
	}
	id := caRecordAt(t, w, second)
	if id == "" || id == key {
		t.Fatalf("the second tree's record id is %q, want a new id beside %s", id, key)
	}
	if st := clitest.ListRecord(t, w.R, key).State; st != machine.StateActive {
		t.Fatalf("the first record is %s; adopting the second tree must leave it as it was", st)
	}
	// Setup again is already-done: the marker names the second record.
	if sh := cxRun(t, w, second, setup); sh.Code != 0 || !strings.Contains(sh.Stdout, "already") {
		t.Fatalf("setup again in the second tree:\n%s", sh)
	}

	// The first record, finished, is assessed as gone, never as moved.
	clitest.MustCustody(t, w.R, 0, "finish", key)
	plan, file := clitest.PlanNow(t, w.R, 0)
	var first1 *machine.PlanItem
	for i := range plan.Items {
		if plan.Items[i].ID == key {
			first1 = &plan.Items[i]
		}
	}
	if first1 == nil {
		t.Fatalf("no plan item for %s: %+v", key, plan.Items)
	}
	for _, r := range first1.Refusals {
		if r.Code == machine.CodeMoved {
			t.Fatalf("the first record is taken for a move into the second tree: %+v", r)
		}
	}
	if first1.Action != machine.ActionSettle {
		t.Fatalf("the first record (its commit is on origin) is %s, want settle: %+v", first1.Action, first1.Refusals)
	}
	if res := clitest.RunBin(t, clitest.Bin(), w.R, w.R.Dir, nil, "apply", "--allow-external-retirement", file); res.Code != 0 {
		t.Fatalf("apply: %s", res)
	}
	if st := clitest.ListRecord(t, w.R, key).State; st != machine.StateTombstoned {
		t.Fatalf("the first record is %s, want tombstoned", st)
	}
	if fi, err := os.Stat(filepath.Join(second, ".git")); err != nil || fi.IsDir() {
		t.Fatalf("the second tree was touched: %v", err)
	}
	if st := clitest.ListRecord(t, w.R, id).State; st != machine.StateActive {
		t.Fatalf("the second record is %s, want active", st)
	}
	if !w.Exists(t, w.Handle(id, "db")) {
		t.Errorf("the second tree's resource is gone")
	}
}

// caAppTreeUsed is an app tree that ran the setup and cleanup scripts,
// and its admin key.
func caAppTreeUsed(t *testing.T, w *clitest.World, setup, cleanup string) (path, key string) {
	t.Helper()
	path = caAppTree(t, w, "1111", "")
	for _, s := range []string{setup, cleanup} {
		if sh := cxRun(t, w, path, s); sh.Code != 0 {
			t.Fatalf("%q in the first tree:\n%s", s, sh)
		}
	}
	return path, filepath.Base(path)
}

// caAppTreeReusing is the app's next tree, to which git gave admin key key
// of a tree it removed.
func caAppTreeReusing(t *testing.T, w *clitest.World, key string) string {
	t.Helper()
	second := caAppTree(t, w, "2222", "")
	if got := strings.TrimSpace(w.R.GitIn(second, "rev-parse", "--git-dir")); filepath.Base(got) != key {
		t.Fatalf("git gave the second tree admin entry %s, want the reused %s", got, key)
	}
	return second
}

// caRecordAt is the id of the live record of the tree at path ("" if none).
func caRecordAt(t *testing.T, w *clitest.World, path string) string {
	t.Helper()
	for _, r := range clitest.ListRecords(t, w.R, false) {
		if r.Path == path {
			return r.ID
		}
	}
	return ""
}
