//go:build unix

package resource

// Per-worktree resources against real git and real commands whose effects
// land outside the repository: each resource is a directory (or a process)
// per handle under a private "external" directory, and every
// create/ensure/destroy appends one line "<verb> <handle>" to its log.
//
// Helpers carry the prefix rt so they cannot collide with the other test
// files of this package.

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/store"
	"github.com/google/go-cmp/cmp"
)

// rtAppendLine appends line to the existing file path, as a person editing
// it would.
func rtAppendLine(t testing.TB, path, line string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, line)
	f.Close()
}

// rtTriggers returns the triggers the journal records for record id.
func rtTriggers(entries []store.Entry, id string) []string {
	var out []string
	for _, e := range entries {
		if e.Record == id {
			out = append(out, e.Trigger)
		}
	}
	return out
}

// tombstoneAt commits the record of the tree at path to tombstoned.
func tombstoneAt(t testing.TB, r *fixtures.Repo, path string) {
	t.Helper()
	s, err := store.Open(filepath.Join(r.Dir, ".git", "custody", "state.db"), 5*time.Second, false)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs {
		if rec.Path != path || rec.State == machine.StateTombstoned {
			continue
		}
		after := rec
		after.State, after.Rev = machine.StateTombstoned, rec.Rev+1
		if err := store.CommitChange(s, store.Transition{Before: rec, After: after, Trigger: "test-tombstone"}); err != nil {
			t.Fatal(err)
		}
	}
}

// rtGCOutcomes reduces GC items to "id outcome [code]".
func rtGCOutcomes(g clitest.GCResult) []string {
	var out []string
	for _, it := range g.Items {
		s := it.ID + " " + string(it.Outcome)
		if it.Refusal != nil {
			s += " " + string(it.Refusal.Code)
		}
		out = append(out, s)
	}
	return out
}

// --- lifecycle -----------------------------------------------------------

// TestResourceLifecycleOrder: resources are created in document order,
// ensured on demand, and destroyed in reverse by apply's removal, each
// with its own intent, all journaled; a .env holding only custody's lines
// does not keep the tree.
func TestResourceLifecycleOrder(t *testing.T) {
	t.Parallel()
	// b is declared before a: document order, not alphabetical.
	w := clitest.SetupResources(t, clitest.ResourceDecl("b", "", "")+clitest.ResourceDecl("a", "", ""), fixtures.Options{})
	made := w.New(t, "feature")
	id := made.ID
	hb, ha := w.Handle(id, "b"), w.Handle(id, "a")
	w.WantLog(t, "create "+hb, "create "+ha)
	if !w.Exists(t, hb) || !w.Exists(t, ha) {
		t.Fatalf("after new, %s and %s must exist in %s", hb, ha, w.Ext)
	}
	var outs []string
	for _, o := range made.Resources {
		outs = append(outs, o.ID+" "+o.Handle+" "+string(o.Outcome))
	}
	if d := cmp.Diff([]string{id + "/b " + hb + " created", id + "/a " + ha + " created"}, outs); d != "" {
		t.Errorf("new --json resources (-want +got):\n%s", d)
	}
	for _, r := range w.Ledger(t, false) {
		if r.State != machine.StateActive || r.Intent != nil || r.Evidence.Attempts != 1 ||
			strings.Contains(r.Create+r.Destroy+r.Ensure, "@") || r.AdminKey != id || r.Path != made.Path {
			t.Errorf("ledger entry after new: %+v", r)
		}
	}

	// ensure, by id from the main checkout, then from inside the tree.
	res := clitest.MustCustody(t, w.R, 0, "resource", "ensure", id, "--json")
	ens := clitest.DecodeResult[clitest.EnsureResult](t, res, "resource ensure")
	if len(ens.Resources) != 2 || ens.Resources[0].Handle != hb || ens.Resources[1].Handle != ha ||
		ens.Resources[0].Outcome != "ensured" || ens.Resources[1].Outcome != "ensured" {
		t.Errorf("resource ensure %s: %+v", id, ens)
	}
	if res := clitest.RunBin(t, clitest.Bin(), w.R, made.Path, nil, "resource", "ensure"); res.Code != 0 {
		t.Errorf("resource ensure inside the tree:\n%s", res)
	}
	w.WantLog(t, "create "+hb, "create "+ha, "ensure "+hb, "ensure "+ha, "ensure "+hb, "ensure "+ha)

	// The tree's .env holds only custody's lines: it does not keep it.
	ap := w.RemoveTree(t, id, 0)
	if len(ap.Items) != 1 || ap.Items[0].Outcome != "removed" {
		t.Fatalf("apply: %+v", ap)
	}
	var torn []string
	for _, o := range ap.Items[0].Resources {
		torn = append(torn, o.ID+" "+string(o.Outcome))
		if o.Refusal != nil {
			t.Errorf("teardown of %s refused: %+v", o.ID, o.Refusal)
		}
	}
	if d := cmp.Diff([]string{id + "/a destroyed", id + "/b destroyed"}, torn); d != "" {
		t.Errorf("apply's teardown (-want +got):\n%s", d)
	}
	w.WantLog(t, "create "+hb, "create "+ha, "ensure "+hb, "ensure "+ha, "ensure "+hb, "ensure "+ha, "destroy "+ha, "destroy "+hb)
	if w.Exists(t, ha) || w.Exists(t, hb) {
		t.Errorf("resources still exist after apply")
	}
	if _, err := os.Lstat(made.Path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("tree %s still exists (%v)", made.Path, err)
	}
	for _, r := range w.Ledger(t, true) {
		if r.State != machine.StateTombstoned || r.Evidence.Outcome != "destroyed" || r.Intent != nil {
			t.Errorf("ledger entry after apply: %+v", r)
		}
	}
	if got := w.Ledger(t, false); len(got) != 0 {
		t.Errorf("resource list shows destroyed entries: %+v", got)
	}
	j := w.Journal(t)
	for _, n := range []string{"a", "b"} {
		// started: each create and destroy records its process group in the intent.
		want := []string{"declare", "started", "created", "ensure", "ensure", "teardown", "started", "destroyed"}
		if d := cmp.Diff(want, rtTriggers(j, id+"/"+n)); d != "" {
			t.Errorf("journal of %s/%s (-want +got):\n%s", id, n, d)
		}
	}
	// Order in the journal: b created before a; a torn down before b; the
	// tree is removed before its resources are destroyed.
	seq := map[string]uint64{}
	for _, e := range j {
		seq[e.Record+" "+e.Trigger] = e.Seq
	}
	for _, pair := range [][2]string{
		{id + "/b created", id + "/a declare"},
		{id + " removed", id + "/a teardown"},
		{id + "/a destroyed", id + "/b teardown"},
	} {
		if seq[pair[0]] == 0 || seq[pair[1]] == 0 || seq[pair[0]] > seq[pair[1]] {
			t.Errorf("journal: want %q (seq %d) before %q (seq %d)", pair[0], seq[pair[0]], pair[1], seq[pair[1]])
		}
	}
	clitest.MustCustody(t, w.R, 0, "doctor")
}

// TestResourceFrozenCommandsWin: custody.toml edited between new and
// removal does not change what runs: ensure and destroy run the frozen
// commands of the ledger.
func TestResourceFrozenCommandsWin(t *testing.T) {
	t.Parallel()
	w := clitest.SetupResources(t, clitest.ResourceDecl("db", "", ""), fixtures.Options{})
	made := w.New(t, "frozen")
	h := w.Handle(made.ID, "db")
	w.R.WriteFile(w.R.Dir, "custody.toml", w.Expand("[resources.cache]\ncreate = 'echo NEW cache >> {EXT}/log'\ndestroy = 'echo NEW cache destroy >> {EXT}/log'\n\n"+
		"[resources.db]\ncreate = 'echo NEW create >> {EXT}/log'\ndestroy = 'echo NEW destroy >> {EXT}/log'\nensure = 'echo NEW ensure >> {EXT}/log'\n"))
	clitest.MustCustody(t, w.R, 0, "resource", "ensure", made.ID)
	ap := w.RemoveTree(t, made.ID, 0)
	if len(ap.Items) != 1 || ap.Items[0].Outcome != "removed" {
		t.Fatalf("apply: %+v", ap)
	}
	w.WantLog(t, "create "+h, "ensure "+h, "destroy "+h)
}

// TestResourceEnv: the tree's .env names the worktree and every resource,
// git ignores it, and a line of the user's in it keeps the tree.
func TestResourceEnv(t *testing.T) {
	t.Parallel()
	w := clitest.SetupResources(t, clitest.ResourceDecl("db", "", "")+clitest.ResourceDecl("dev-server", "", ""), fixtures.Options{})
	made := w.New(t, "env")
	env := filepath.Join(made.Path, ".env")
	b, err := os.ReadFile(env)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("CUSTODY_WORKTREE_ID=%s\nCUSTODY_PORT=%d\nCUSTODY_RESOURCE_DB=%s\nCUSTODY_RESOURCE_DEV_SERVER=%s\n",
		made.ID, made.Port, w.Handle(made.ID, "db"), w.Handle(made.ID, "dev-server"))
	if d := cmp.Diff(want, string(b)); d != "" {
		t.Errorf(".env (-want +got):\n%s", d)
	}
	if _, err := w.R.TryGitIn(made.Path, "check-ignore", "-q", ".env"); err != nil {
		t.Errorf(".env is not ignored by git: %v", err)
	}
	if st := w.R.GitIn(made.Path, "status", "--porcelain"); st != "" {
		t.Errorf("the new tree is not clean: %q", st)
	}

	// The user adds a line: now the .env is theirs too and keeps the tree.
	rtAppendLine(t, env, "API_TOKEN=mine")
	clitest.MustCustody(t, w.R, 0, "finish", made.ID)
	plan := clitest.DecodeResult[machine.Plan](t, clitest.MustCustody(t, w.R, 0, "plan", "--json"), "plan") // 0: a kept tree is the plan's result
	if len(plan.Items) != 1 || plan.Items[0].Action != "keep" {
		t.Fatalf("plan: want the tree kept, got %+v", plan.Items)
	}
	codes := []machine.Code{}
	for _, r := range plan.Items[0].Refusals {
		codes = append(codes, r.Code)
	}
	if !slices.Contains(codes, machine.CodeIgnoredFiles) {
		t.Errorf("plan keeps the tree for %v, want %s among them", codes, machine.CodeIgnoredFiles)
	}
	if b, _ := os.ReadFile(env); !strings.Contains(string(b), "API_TOKEN=mine\n") {
		t.Errorf("the user's line is gone from .env: %q", b)
	}
	w.WantLog(t, "create "+w.Handle(made.ID, "db"), "create "+w.Handle(made.ID, "dev-server"))
}

// TestResourceEnvUserLineShapedLikeCustodys: a .env line custody did not
// write is the user's and keeps the tree, even when it is shaped like
// custody's (CUSTODY_RESOURCE_<X>=<value>).
func TestResourceEnvUserLineShapedLikeCustodys(t *testing.T) {
	t.Parallel()
	w := clitest.SetupResources(t, clitest.ResourceDecl("db", "", ""), fixtures.Options{})
	made := w.New(t, "env")
	rtAppendLine(t, filepath.Join(made.Path, ".env"), "CUSTODY_RESOURCE_SEARCH=my-own-shared-index")
	clitest.MustCustody(t, w.R, 0, "finish", made.ID)
	items := w.Plan(t, "")
	it, ok := rtPlanItemOf(t, items, made.ID)
	if !ok {
		t.Fatalf("plan has no item %s: %+v", made.ID, items)
	}
	if it.Action != "keep" {
		t.Errorf("plan would %s %s, whose .env holds a line the user wrote", it.Action, made.ID)
	}
}

// TestResourceEnvTracked: a .env the project tracks is never edited.
func TestResourceEnvTracked(t *testing.T) {
	t.Parallel()
	w := clitest.SetupResources(t, clitest.ResourceDecl("db", "", ""), fixtures.Options{})
	w.R.Commit(w.R.Dir, ".env", "PROJECT=1\n")
	w.R.Push(w.R.Dir, "main")
	made := w.New(t, "tracked")
	if b, _ := os.ReadFile(filepath.Join(made.Path, ".env")); string(b) != "PROJECT=1\n" {
		t.Errorf("tracked .env changed: %q", b)
	}
	if st := w.R.GitIn(made.Path, "status", "--porcelain"); st != "" {
		t.Errorf("the new tree is not clean: %q", st)
	}
}

// TestResourceIdentity: resource identity prints the handle the ledger and
// .env hold; two projects' handles differ by their slug.
func TestResourceIdentity(t *testing.T) {
	t.Parallel()
	var handles []string
	for _, slug := range []string{"alpha", "beta"} {
		w := clitest.SetupResources(t, "[project]\nslug = \""+slug+"\"\n\n"+clitest.ResourceDecl("db", "", ""), fixtures.Options{})
		made := w.New(t, "same-name")
		want := slug + "-" + made.ID + "-db"
		if got := strings.TrimSpace(clitest.MustCustody(t, w.R, 0, "resource", "identity", "db", "--id", made.ID).Stdout); got != want {
			t.Errorf("resource identity db --id %s = %q, want %q", made.ID, got, want)
		}
		in := clitest.RunBin(t, clitest.Bin(), w.R, made.Path, nil, "resource", "identity", "db", "--json")
		got := clitest.DecodeResult[map[string]string](t, in, "resource identity")
		if d := cmp.Diff(map[string]string{"id": made.ID, "name": "db", "handle": want, "ident": strings.ReplaceAll(want, "-", "_")}, got); d != "" {
			t.Errorf("resource identity inside the tree (-want +got):\n%s", d)
		}
		if e := w.Entry(t, made.ID+"/db"); e.Handle != want {
			t.Errorf("ledger handle %q, want %q", e.Handle, want)
		}
		if b, _ := os.ReadFile(filepath.Join(made.Path, ".env")); !strings.Contains(string(b), "CUSTODY_RESOURCE_DB="+want+"\n") {
			t.Errorf(".env does not name %s: %q", want, b)
		}
		w.WantLog(t, "create "+want)
		// An undeclared resource, an unknown id.
		if ref := clitest.DecodeError(t, clitest.MustCustody(t, w.R, 1, "resource", "identity", "cache", "--id", made.ID, "--json")); !strings.Contains(ref.Message, "cache") {
			t.Errorf("identity of an undeclared resource: %+v", ref)
		}
		clitest.MustCustody(t, w.R, 1, "resource", "identity", "db", "--id", "nope-000000")
		handles = append(handles, want)
	}
	if handles[0] == handles[1] {
		t.Errorf("two projects share a handle %s", handles[0])
	}
}

// TestResourceIdentityAfterSlugChange: `custody resource identity`, the
// ledger and the tree's .env all yield the same handle, the frozen one,
// also after [project] slug changes in custody.toml.
func TestResourceIdentityAfterSlugChange(t *testing.T) {
	t.Parallel()
	w := clitest.SetupResources(t, "[project]\nslug = \"alpha\"\n\n"+clitest.ResourceDecl("db", "", ""), fixtures.Options{})
	made := w.New(t, "ident")
	frozen := w.Entry(t, made.ID+"/db").Handle
	clitest.WriteTrusted(t, w.R, w.Expand("[project]\nslug = \"beta\"\n\n"+clitest.ResourceDecl("db", "", "")))
	got := strings.TrimSpace(clitest.MustCustody(t, w.R, 0, "resource", "identity", "db", "--id", made.ID).Stdout)
	if got != frozen {
		t.Errorf("resource identity db = %q, but the ledger and .env hold %q", got, frozen)
	}
	if b, _ := os.ReadFile(filepath.Join(made.Path, ".env")); !strings.Contains(string(b), "="+frozen+"\n") {
		t.Errorf(".env does not hold %s: %q", frozen, b)
	}
}

// TestResourceEnsureUnknownWorktree: `custody resource ensure ID` for an
// id that names no worktree is refused with unknown-record, as `resource
// identity --id` is.
func TestResourceEnsureUnknownWorktree(t *testing.T) {
	t.Parallel()
	w := clitest.SetupResources(t, clitest.ResourceDecl("db", "", ""), fixtures.Options{})
	res := clitest.Custody(t, w.R, "resource", "ensure", "nope-000000", "--json")
	if res.Code != 1 {
		t.Fatalf("resource ensure of an unknown id: want exit 1, got\n%s", res)
	}
	if ref := clitest.DecodeError(t, res); ref.Code != string(machine.CodeUnknownRecord) {
		t.Errorf("want %s, got %+v", machine.CodeUnknownRecord, ref)
	}
}

// --- create failures ---------------------------------------------------------

// TestResourceRequiredCreateFails: a failing required create rolls `custody
// new` back completely, destroying what was made in reverse.
func TestResourceRequiredCreateFails(t *testing.T) {
	t.Parallel()
	failing := "echo create @resource@ >> {EXT}/log; exit 1"
	w := clitest.SetupResources(t, clitest.ResourceDecl("a", "", "")+clitest.ResourceDecl("b", failing, "")+clitest.ResourceDecl("c", "", ""), fixtures.Options{})
	res := clitest.MustCustody(t, w.R, 1, "new", "doomed", "--json")
	ref := clitest.DecodeError(t, res)
	if ref.Code != string(machine.CodeCreateFailed) || !strings.Contains(ref.Message, "rolled back") {
		t.Errorf("new: want create-failed naming the rollback, got %+v", ref)
	}
	rec := w.NothingLeft(t)
	ha, hb := w.Handle(rec.ID, "a"), w.Handle(rec.ID, "b")
	if !strings.Contains(ref.Message, hb) {
		t.Errorf("the refusal does not name the failed resource %s: %s", hb, ref.Message)
	}
	// c is never created; the failed b's destroy runs too (its create may
	// have half-made something), then a's.
	w.WantLog(t, "create "+ha, "create "+hb, "destroy "+hb, "destroy "+ha)
	if w.Exists(t, ha) {
		t.Errorf("%s still exists after the rollback", ha)
	}
	var got []string
	for _, r := range w.Ledger(t, true) {
		got = append(got, r.ID+" "+string(r.State)+" "+r.Evidence.Outcome)
	}
	slices.Sort(got)
	if d := cmp.Diff([]string{rec.ID + "/a tombstoned destroyed", rec.ID + "/b tombstoned destroyed"}, got); d != "" {
		t.Errorf("ledger after the rollback (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"declare", "started", "create-failed", "teardown", "started", "destroyed"}, rtTriggers(w.Journal(t), rec.ID+"/b")); d != "" {
		t.Errorf("journal of the failed resource (-want +got):\n%s", d)
	}
	clitest.MustCustody(t, w.R, 0, "doctor")
}

// TestResourceRollbackNamesFailedDestroy: when a required create fails and
// an earlier resource's destroy also fails during the rollback, the error
// names that resource (it still exists and waits for GC) and does not
// claim the earlier resources were destroyed.
func TestResourceRollbackNamesFailedDestroy(t *testing.T) {
	t.Parallel()
	w := clitest.SetupResources(t, clitest.ResourceDecl("a", "", "echo destroy a >> {EXT}/log; exit 1")+clitest.ResourceDecl("b", "exit 1", ""), fixtures.Options{})
	ref := clitest.DecodeError(t, clitest.MustCustody(t, w.R, 1, "new", "doomed", "--json"))
	recs := w.Records(t)
	if len(recs) != 1 {
		t.Fatalf("records: %+v", recs)
	}
	ha := w.Handle(recs[0].ID, "a")
	if !w.Exists(t, ha) {
		t.Fatalf("scene: %s should still exist after its failed destroy", ha)
	}
	if !strings.Contains(ref.Message, ha) || strings.Contains(ref.Message, "earlier resources destroyed") {
		t.Errorf("the rollback error hides that %s was not destroyed: %q", ha, ref.Message)
	}
}

// TestResourceOptionalCreateFails: a non-required failing create is
// recorded as failed, the worktree proceeds, and its destroy still runs at
// removal.
func TestResourceOptionalCreateFails(t *testing.T) {
	t.Parallel()
	failing := "echo create @resource@ >> {EXT}/log; exit 7"
	w := clitest.SetupResources(t, clitest.ResourceDecl("opt", failing, "", "required = false")+clitest.ResourceDecl("db", "", ""), fixtures.Options{})
	made := w.New(t, "proceeds")
	ho, hd := w.Handle(made.ID, "opt"), w.Handle(made.ID, "db")
	if len(made.Resources) != 2 || made.Resources[0].Refusal == nil || made.Resources[0].Refusal.Code != machine.CodeResourceFailed ||
		made.Resources[0].ExitCode != 7 || made.Resources[1].Outcome != "created" {
		t.Errorf("new --json resources: %+v", made.Resources)
	}
	if st := w.Record(t, made.ID).State; st != "active" {
		t.Errorf("worktree is %s, want active", st)
	}
	e := w.Entry(t, made.ID+"/opt")
	if e.State != machine.StateFinished || e.Evidence.Outcome != "create-failed" || e.Evidence.ExitCode != 7 || e.Intent != nil {
		t.Errorf("failed optional entry: state %s evidence %+v", e.State, e.Evidence)
	}
	w.WantLog(t, "create "+ho, "create "+hd)
	// ensure skips what is not active.
	clitest.MustCustody(t, w.R, 0, "resource", "ensure", made.ID)
	w.WantLog(t, "create "+ho, "create "+hd, "ensure "+hd)

	ap := w.RemoveTree(t, made.ID, 0)
	if len(ap.Items) != 1 || ap.Items[0].Outcome != "removed" {
		t.Fatalf("apply: %+v", ap)
	}
	w.WantLog(t, "create "+ho, "create "+hd, "ensure "+hd, "destroy "+hd, "destroy "+ho)
	if e := w.Entry(t, made.ID+"/opt"); e.State != machine.StateTombstoned {
		t.Errorf("the failed entry is %s after removal, want tombstoned", e.State)
	}
}

// TestResourceRetries: retries = 2 runs a create up to three times.
func TestResourceRetries(t *testing.T) {
	t.Parallel()
	// Fails on attempts 1 and 2, succeeds from attempt 3.
	flaky := "n=$(cat {EXT}/count 2>/dev/null || echo 0); n=$((n+1)); echo $n > {EXT}/count; " +
		"echo attempt $n >> {EXT}/log; [ $n -ge 3 ] && mkdir {EXT}/@resource@ && echo create @resource@ >> {EXT}/log"
	for _, tt := range []struct {
		retries int
		ok      bool
	}{{2, true}, {1, false}} {
		t.Run(fmt.Sprintf("retries=%d", tt.retries), func(t *testing.T) {
			t.Parallel()
			w := clitest.SetupResources(t, clitest.ResourceDecl("db", flaky, "", fmt.Sprintf("retries = %d", tt.retries)), fixtures.Options{})
			if !tt.ok {
				clitest.MustCustody(t, w.R, 1, "new", "flaky")
				rec := w.NothingLeft(t)
				w.WantLog(t, "attempt 1", "attempt 2", "destroy "+w.Handle(rec.ID, "db"))
				return
			}
			made := w.New(t, "flaky")
			h := w.Handle(made.ID, "db")
			e := w.Entry(t, made.ID+"/db")
			if e.State != machine.StateActive || e.Evidence.Attempts != 3 || e.Retries != 2 {
				t.Errorf("entry: state %s attempts %d retries %d, want active after 3 attempts", e.State, e.Evidence.Attempts, e.Retries)
			}
			w.WantLog(t, "attempt 1", "attempt 2", "attempt 3", "create "+h)
			if !w.Exists(t, h) {
				t.Errorf("%s does not exist", h)
			}
		})
	}
}

// TestResourceTokens: every token expands to its value (@resource@,
// @resource_ident@, @id@, @dir@, @branch@, @port@, @slug@, @repo@), and
// live worktrees hold distinct ports within port_base..port_base+span-1;
// when every port is held, the next new is refused.
func TestResourceTokens(t *testing.T) {
	t.Parallel()
	create := "printf '%s\\n' @resource@ @resource_ident@ @id@ @dir@ @branch@ @port@ @slug@ @repo@ > {EXT}/@resource@"
	w := clitest.SetupResources(t, "[project]\nslug = \"shop\"\n[worktree]\nport_base = 40000\nport_span = 3\n\n"+clitest.ResourceDecl("db", create, ""), fixtures.Options{})
	var ports []int
	for i := range 3 {
		made := w.New(t, fmt.Sprintf("tok %d", i))
		h := w.Handle(made.ID, "db")
		b, err := os.ReadFile(filepath.Join(w.Ext, h))
		if err != nil {
			t.Fatal(err)
		}
		want := strings.Join([]string{h, strings.ReplaceAll(h, "-", "_"), made.ID, made.Path, made.Branch,
			strconv.Itoa(made.Port), "shop", w.R.Dir}, "\n") + "\n"
		if string(b) != want {
			t.Errorf("expanded tokens:\n%s\nwant:\n%s", b, want)
		}
		if made.Port < 40000 || made.Port > 40002 {
			t.Errorf("port %d outside port_base..port_base+span-1", made.Port)
		}
		ports = append(ports, made.Port)
	}
	if ports[0] == ports[1] || ports[1] == ports[2] || ports[0] == ports[2] {
		t.Errorf("live worktrees share a port: %v", ports)
	}
	// Every port is held: the next new is refused.
	clitest.MustCustody(t, w.R, 1, "new", "full")
}

// TestResourceUnexpandedToken: a command with a token custody does not know
// is refused before anything runs.
func TestResourceUnexpandedToken(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, create, destroy string }{
		{"in-create", "echo create @nosuchtoken@ >> {EXT}/log", ""},
		{"in-destroy", "", "rm -rf {EXT}/@nosuchtoken@; echo destroy >> {EXT}/log"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := clitest.SetupResources(t, clitest.ResourceDecl("db", tt.create, tt.destroy), fixtures.Options{})
			ref := clitest.DecodeError(t, clitest.MustCustody(t, w.R, 1, "new", "tok", "--json"))
			if (ref.Code != string(machine.CodeUnexpandedToken) && ref.Code != string(machine.CodeCreateFailed)) || !strings.Contains(ref.Message, "@nosuchtoken@") {
				t.Errorf("new: want unexpanded-token or create-failed naming @nosuchtoken@, got %+v", ref)
			}
			w.NothingLeft(t)
			w.WantLog(t) // nothing ran
			if got := w.Ledger(t, true); len(got) != 0 {
				t.Errorf("a refused resource is in the ledger: %+v", got)
			}
		})
	}
}

// TestResourceUnexpandedBehindApostrophe: a frozen command still carrying
// an @token@ is refused, never half-run, even when an apostrophe inside
// double quotes comes before it (sh does not start a single-quoted string
// there).
func TestResourceUnexpandedBehindApostrophe(t *testing.T) {
	t.Parallel()
	create := `echo "it's" >/dev/null; mkdir {EXT}/@nosuchtoken@; echo create ran >> {EXT}/log`
	w := clitest.SetupResources(t, clitest.ResourceDecl("db", create, ""), fixtures.Options{})
	res := clitest.Custody(t, w.R, "new", "tok", "--json")
	if res.Code != 1 {
		t.Errorf("custody new: want exit 1 (refused), got %d", res.Code)
	} else if ref := clitest.DecodeError(t, res); !strings.Contains(ref.Message, "@nosuchtoken@") {
		t.Errorf("refusal does not name @nosuchtoken@: %+v", ref)
	}
	if lines := w.LogLines(t); len(lines) != 0 {
		t.Errorf("the command with an unexpanded token ran: log %q", lines)
	}
	if _, err := os.Lstat(filepath.Join(w.Ext, "@nosuchtoken@")); err == nil {
		t.Errorf("%s/@nosuchtoken@ was made by a half-expanded command", w.Ext)
	}
}

// TestResourceTokenLikeValue: a value custody expands may itself contain
// something shaped like @token@ (here the repository's path); it is a
// value, not a token left in the command, and is not refused.
func TestResourceTokenLikeValue(t *testing.T) {
	t.Parallel()
	w := clitest.SetupResources(t, clitest.ResourceDecl("db", "mkdir {EXT}/@resource@ && echo @dir@ > {EXT}/@resource@/dir && echo create @resource@ >> {EXT}/log", ""),
		fixtures.Options{Name: "mail@box@repo"})
	res := clitest.Custody(t, w.R, "new", "at", "--json")
	if res.Code != 0 {
		t.Fatalf("new in a checkout named mail@box@repo: %s", res)
	}
	made := clitest.DecodeResult[steps.NewResult](t, res, "new")
	b, err := os.ReadFile(filepath.Join(w.Ext, w.Handle(made.ID, "db"), "dir"))
	if err != nil || strings.TrimSpace(string(b)) != made.Path {
		t.Errorf("@dir@ expanded to %q (%v), want %s", b, err, made.Path)
	}
}

// --- orphan GC -----------------------------------------------------------

// TestResourceGCOrphan: a tree removed by rm -rf whose admin entry git
// pruned is provably gone: GC reports it on --dry-run, destroys it once,
// and then has nothing to do.
func TestResourceGCOrphan(t *testing.T) {
	t.Parallel()
	w := clitest.SetupResources(t, clitest.ResourceDecl("db", "", ""), fixtures.Options{})
	gone := w.New(t, "gone")
	live := w.New(t, "live")
	hg, hl := w.Handle(gone.ID, "db"), w.Handle(live.ID, "db")
	w.Vanish(t, gone.Path, true)

	before := w.Ledger(t, true)
	dry := w.GC(t, 0, true)
	if d := cmp.Diff([]string{gone.ID + "/db would-reclaim", live.ID + "/db kept worktree-live"}, rtGCOutcomes(dry)); d != "" {
		t.Errorf("gc --dry-run (-want +got):\n%s", d)
	}
	if !dry.DryRun {
		t.Errorf("gc --dry-run says dry_run false")
	}
	if d := cmp.Diff(before, w.Ledger(t, true)); d != "" {
		t.Errorf("gc --dry-run changed the ledger:\n%s", d)
	}
	w.WantLog(t, "create "+hg, "create "+hl)
	if !w.Exists(t, hg) {
		t.Fatalf("gc --dry-run destroyed %s", hg)
	}

	g := w.GC(t, 0, false)
	if d := cmp.Diff([]string{gone.ID + "/db destroyed", live.ID + "/db kept worktree-live"}, rtGCOutcomes(g)); d != "" {
		t.Errorf("gc (-want +got):\n%s", d)
	}
	w.WantLog(t, "create "+hg, "create "+hl, "destroy "+hg)
	if w.Exists(t, hg) || !w.Exists(t, hl) {
		t.Errorf("after gc: %s exists %v (want false), %s exists %v (want true)", hg, w.Exists(t, hg), hl, w.Exists(t, hl))
	}
	if e := w.Entry(t, gone.ID+"/db"); e.State != machine.StateTombstoned || e.Evidence.Outcome != "destroyed" {
		t.Errorf("reclaimed entry: %s %+v", e.State, e.Evidence)
	}

	again := w.GC(t, 0, false)
	if d := cmp.Diff([]string{live.ID + "/db kept worktree-live"}, rtGCOutcomes(again)); d != "" {
		t.Errorf("second gc (-want +got):\n%s", d)
	}
	w.WantLog(t, "create "+hg, "create "+hl, "destroy "+hg)
	w.NoIntents(t)
	w.Journal(t)
}

func rtPlanItemOf(t testing.TB, items []machine.PlanItem, id string) (machine.PlanItem, bool) {
	t.Helper()
	for _, it := range items {
		if it.ID == id {
			return it, true
		}
	}
	return machine.PlanItem{}, false
}

// TestResourcePlanOrphans: plan lists orphaned resources as destroy items
// and apply of that plan destroys them, along with removable trees.
func TestResourcePlanOrphans(t *testing.T) {
	t.Parallel()
	w := clitest.SetupResources(t, clitest.ResourceDecl("db", "", ""), fixtures.Options{})
	gone := w.New(t, "gone")
	done := w.New(t, "done")
	hg, hd := w.Handle(gone.ID, "db"), w.Handle(done.ID, "db")
	w.Vanish(t, gone.Path, true)
	clitest.MustCustody(t, w.R, 0, "finish", done.ID)

	file := filepath.Join(w.R.Root, "plan.json")
	items := w.Plan(t, file)
	it, ok := rtPlanItemOf(t, items, gone.ID+"/db")
	if !ok || it.Kind != "resource" || it.Action != "destroy" || it.Fingerprint == "" {
		t.Fatalf("plan: want %s/db as kind resource, action destroy; got %+v", gone.ID, items)
	}
	if it, ok := rtPlanItemOf(t, items, done.ID); !ok || it.Action != "remove" {
		t.Errorf("plan: want %s removed, got %+v", done.ID, items)
	}
	if _, ok := rtPlanItemOf(t, items, done.ID+"/db"); ok {
		t.Errorf("plan lists the resource of a live tree as an orphan: %+v", items)
	}
	w.WantLog(t, "create "+hg, "create "+hd) // plan changes nothing

	ap := clitest.DecodeResult[steps.ApplyResult](t, clitest.MustCustody(t, w.R, 0, "apply", file, "--json"), "apply")
	got := map[string]string{}
	for _, o := range ap.Items {
		got[o.ID] = string(o.Outcome)
	}
	// The vanished tree's record settles first, destroying its resource;
	// the destroy item then finds it done.
	if d := cmp.Diff(map[string]string{gone.ID: "settled", gone.ID + "/db": "already-done", done.ID: "removed"}, got); d != "" {
		t.Errorf("apply (-want +got):\n%s", d)
	}
	if w.Exists(t, hg) || w.Exists(t, hd) {
		t.Errorf("resources left after apply")
	}
	lines := w.LogLines(t)
	for _, h := range []string{hg, hd} {
		if n := strings.Count(strings.Join(lines, "\n")+"\n", "destroy "+h+"\n"); n != 1 {
			t.Errorf("%s destroyed %d times, want once: %q", h, n, lines)
		}
	}
	// Applying the same plan again destroys nothing more.
	clitest.MustCustody(t, w.R, 0, "apply", file)
	if d := cmp.Diff(lines, w.LogLines(t)); d != "" {
		t.Errorf("reapply ran commands:\n%s", d)
	}
	if items := w.Plan(t, ""); len(items) != 0 { // the vanished tree's record is settled
		t.Errorf("plan after apply: %+v", items)
	}
}

// TestResourceGCLockedMissing: a locked worktree whose directory is gone
// (an unmounted disk) keeps its admin entry and is live.
func TestResourceGCLockedMissing(t *testing.T) {
	t.Parallel()
	w := clitest.SetupResources(t, clitest.ResourceDecl("db", "", ""), fixtures.Options{})
	made := w.New(t, "usb")
	h := w.Handle(made.ID, "db")
	w.R.Git("worktree", "lock", "--reason", "on a removable disk", made.Path)
	w.Vanish(t, made.Path, true) // prune leaves a locked entry alone
	if _, err := os.Lstat(filepath.Join(w.R.Dir, ".git", "worktrees", made.ID)); err != nil {
		t.Fatalf("git pruned a locked worktree's admin entry: %v", err)
	}
	for _, dry := range []bool{true, false} {
		g := w.GC(t, 0, dry)
		if d := cmp.Diff([]string{made.ID + "/db kept worktree-live"}, rtGCOutcomes(g)); d != "" {
			t.Errorf("gc dry=%v (-want +got):\n%s", dry, d)
		}
	}
	if _, ok := rtPlanItemOf(t, w.Plan(t, ""), made.ID+"/db"); ok {
		t.Errorf("plan lists the resource of a locked worktree")
	}
	w.WantLog(t, "create "+h)
	if !w.Exists(t, h) {
		t.Errorf("%s was destroyed", h)
	}
	if e := w.Entry(t, made.ID+"/db"); e.State != machine.StateActive {
		t.Errorf("entry is %s, want active", e.State)
	}
}

// TestResourceGCRecycled: a live worktree at the entry's path keeps it,
// whether git gave the new tree the old admin key or another one.
func TestResourceGCRecycled(t *testing.T) {
	t.Parallel()
	t.Run("same-admin-key", func(t *testing.T) {
		t.Parallel()
		w := clitest.SetupResources(t, clitest.ResourceDecl("db", "", ""), fixtures.Options{})
		made := w.New(t, "recycled")
		h := w.Handle(made.ID, "db")
		w.Vanish(t, made.Path, false)
		if err := os.RemoveAll(filepath.Join(w.R.Dir, ".git", "worktrees", made.ID)); err != nil {
			t.Fatal(err)
		}
		w.R.Git("worktree", "add", "-q", "-b", "someone-else", made.Path)
		g := w.GC(t, 0, false)
		if d := cmp.Diff([]string{made.ID + "/db kept worktree-live"}, rtGCOutcomes(g)); d != "" {
			t.Errorf("gc (-want +got):\n%s", d)
		}
		w.WantLog(t, "create "+h)
	})
	t.Run("other-admin-key", func(t *testing.T) {
		t.Parallel()
		w := clitest.SetupResources(t, clitest.ResourceDecl("db", "", ""), fixtures.Options{})
		made := w.New(t, "recycled")
		h := w.Handle(made.ID, "db")
		w.Vanish(t, made.Path, true)
		// A tree made elsewhere (admin key "elsewhere") moved onto the path.
		other := filepath.Join(w.R.Root, "elsewhere")
		w.R.Git("worktree", "add", "-q", "-b", "someone-else", other)
		w.R.Git("worktree", "move", other, made.Path)
		if _, err := os.Lstat(filepath.Join(w.R.Dir, ".git", "worktrees", made.ID)); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("the old admin key is present (%v): the scene does not test the path guard", err)
		}
		for _, dry := range []bool{true, false} {
			g := w.GC(t, 0, dry)
			if len(g.Items) != 1 || g.Items[0].Outcome != "kept" || g.Items[0].Refusal == nil ||
				g.Items[0].Refusal.Code != machine.CodeWorktreeLive || !strings.Contains(g.Items[0].Refusal.Message, "path recycled") {
				t.Errorf("gc dry=%v: want kept worktree-live (path recycled), got %+v", dry, g.Items)
			}
		}
		w.WantLog(t, "create "+h)
		if !w.Exists(t, h) {
			t.Errorf("%s was destroyed", h)
		}
	})
}

// TestResourceGCDisabled: gc = false is never reclaimed, and doctor flags
// the orphan.
func TestResourceGCDisabled(t *testing.T) {
	t.Parallel()
	w := clitest.SetupResources(t, clitest.ResourceDecl("db", "", "", "gc = false"), fixtures.Options{})
	made := w.New(t, "keep")
	h := w.Handle(made.ID, "db")
	// While its worktree lives, a gc = false resource is no orphan: doctor
	// has nothing to flag and plan nothing to list.
	if res := clitest.Custody(t, w.R, "doctor"); res.Code != 0 {
		t.Errorf("doctor flags the gc = false resource of a live worktree:\n%s", res)
	}
	if it, ok := rtPlanItemOf(t, w.Plan(t, ""), made.ID+"/db"); ok {
		t.Errorf("plan lists the gc = false resource of a live worktree: %+v", it)
	}
	w.Vanish(t, made.Path, true)
	for _, dry := range []bool{true, false} {
		res := clitest.Custody(t, w.R, "resource", "gc", "--json", fmt.Sprintf("--dry-run=%v", dry))
		if res.Code != 0 && res.Code != 3 {
			t.Fatalf("gc: %s", res)
		}
		g := clitest.DecodeResult[clitest.GCResult](t, res, "resource gc")
		if d := cmp.Diff([]string{made.ID + "/db kept gc-disabled"}, rtGCOutcomes(g)); d != "" {
			t.Errorf("gc dry=%v (-want +got):\n%s", dry, d)
		}
	}
	doc := clitest.MustCustody(t, w.R, 3, "doctor")
	if !strings.Contains(doc.Stdout, made.ID+"/db") || !strings.Contains(doc.Stdout, "gc = false") {
		t.Errorf("doctor does not flag %s/db:\n%s", made.ID, doc)
	}
	if it, ok := rtPlanItemOf(t, w.Plan(t, ""), made.ID+"/db"); !ok || it.Action != "keep" || it.Refusal == nil || it.Refusal.Code != machine.CodeGCDisabled {
		t.Errorf("plan: want %s/db kept with gc-disabled, got %+v", made.ID, it)
	}
	w.WantLog(t, "create "+h)
	if !w.Exists(t, h) {
		t.Errorf("%s was destroyed", h)
	}
}

// TestResourceDestroyFails: a failed destroy keeps the entry for GC and
// makes apply exit 3; doctor flags it; GC reclaims it once it can.
func TestResourceDestroyFails(t *testing.T) {
	t.Parallel()
	destroy := "test ! -e {EXT}/refuse && rm -rf {EXT}/@resource@ && echo destroy @resource@ >> {EXT}/log"
	w := clitest.SetupResources(t, clitest.ResourceDecl("db", "", destroy), fixtures.Options{})
	made := w.New(t, "stuck")
	h := w.Handle(made.ID, "db")
	if err := os.WriteFile(filepath.Join(w.Ext, "refuse"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ap := w.RemoveTree(t, made.ID, 3)
	if len(ap.Items) != 1 || ap.Items[0].Outcome != "removed" || len(ap.Items[0].Resources) != 1 ||
		ap.Items[0].Resources[0].Refusal == nil || ap.Items[0].Resources[0].Refusal.Code != machine.CodeResourceFailed {
		t.Fatalf("apply: want the tree removed and its resource's destroy failed, got %+v", ap)
	}
	e := w.Entry(t, made.ID+"/db")
	if e.State != machine.StateFinished || e.Evidence.Outcome != "destroy-failed" || e.Intent != nil {
		t.Errorf("entry after the failed destroy: %s %+v", e.State, e.Evidence)
	}
	doc := clitest.MustCustody(t, w.R, 3, "doctor")
	if !strings.Contains(doc.Stdout, made.ID+"/db") {
		t.Errorf("doctor does not flag the failed destroy:\n%s", doc)
	}
	if err := os.Remove(filepath.Join(w.Ext, "refuse")); err != nil {
		t.Fatal(err)
	}
	g := w.GC(t, 0, false)
	if d := cmp.Diff([]string{made.ID + "/db destroyed"}, rtGCOutcomes(g)); d != "" {
		t.Errorf("gc (-want +got):\n%s", d)
	}
	w.WantLog(t, "create "+h, "destroy "+h)
	clitest.MustCustody(t, w.R, 0, "doctor")
}

// --- crash safety -------------------------------------------------------

func rtCount(lines []string, line string) int {
	n := 0
	for _, l := range lines {
		if l == line {
			n++
		}
	}
	return n
}

// TestResourceCrashAfterCreateIntent: killed between the create intent and
// the create, `custody new` is converged by resume: the tree active, each
// resource made exactly once, no intent left.
func TestResourceCrashAfterCreateIntent(t *testing.T) {
	t.Parallel()
	w := clitest.SetupResources(t, clitest.ResourceDecl("a", "", "")+clitest.ResourceDecl("b", "", ""), fixtures.Options{})
	w.Killed(t, "resource/after-create-intent", "new", "crash")
	recs := w.Records(t)
	if len(recs) != 1 || recs[0].State != "provisioning" {
		t.Fatalf("after the kill: %+v", recs)
	}
	id := recs[0].ID
	ha, hb := w.Handle(id, "a"), w.Handle(id, "b")
	if e := w.Entry(t, id+"/a"); e.State != machine.StateProvisioning || e.Intent == nil || e.Intent.Kind != machine.IntentResourceCreate {
		t.Fatalf("the create intent was not durable before the kill: %+v", e)
	}
	w.WantLog(t) // the create never ran

	res := clitest.MustCustody(t, w.R, 0, "resume", "--json")
	items := clitest.DecodeResult[clitest.ItemsResult[steps.ResumeItem]](t, res, "resume").Items
	t.Logf("resume: %+v", items)
	if len(items) != 1 || items[0].ID != id || items[0].Outcome != "activated" || items[0].Refusal != nil {
		t.Errorf("resume: want %s activated, got %+v", id, items)
	}
	if st := w.Record(t, id).State; st != "active" {
		t.Errorf("tree is %s after resume, want active", st)
	}
	lines := w.LogLines(t)
	t.Logf("external log after resume: %q", lines)
	// Resume undoes the interrupted create with the frozen
	// destroy (the outcome of a create it did not see is unknown), then
	// creates once: [destroy a, create a, create b].
	for _, h := range []string{ha, hb} {
		if n := rtCount(lines, "create "+h); n != 1 {
			t.Errorf("%s created %d times, want exactly once", h, n)
		}
		if !w.Exists(t, h) {
			t.Errorf("%s does not exist after resume", h)
		}
	}
	if i, j := slices.Index(lines, "destroy "+ha), slices.Index(lines, "create "+ha); i >= 0 && i > j {
		t.Errorf("the undo of %s ran after its create: %q", ha, lines)
	}
	if rtCount(lines, "destroy "+hb) != 0 {
		t.Errorf("%s, never declared before the kill, was destroyed: %q", hb, lines)
	}
	for _, r := range w.Ledger(t, false) {
		if r.State != machine.StateActive {
			t.Errorf("entry %s is %s after resume", r.ID, r.State)
		}
	}
	w.NoIntents(t)
	w.Journal(t)
	clitest.MustCustody(t, w.R, 0, "doctor")
	// Resume again: nothing to do, nothing runs.
	clitest.MustCustody(t, w.R, 0, "resume")
	if d := cmp.Diff(lines, w.LogLines(t)); d != "" {
		t.Errorf("a second resume ran commands:\n%s", d)
	}
}

// TestResourceCrashAfterDestroyIntent: killed between the destroy intent
// and the destroy during apply, resume destroys the resource exactly once
// and the tree stays removed.
func TestResourceCrashAfterDestroyIntent(t *testing.T) {
	t.Parallel()
	for _, names := range [][]string{{"db"}, {"a", "b"}} {
		t.Run(strings.Join(names, "+"), func(t *testing.T) {
			t.Parallel()
			toml := ""
			for _, n := range names {
				toml += clitest.ResourceDecl(n, "", "")
			}
			w := clitest.SetupResources(t, toml, fixtures.Options{})
			made := w.New(t, "crash")
			clitest.MustCustody(t, w.R, 0, "finish", made.ID)
			plan := filepath.Join(w.R.Root, "plan.json")
			clitest.MustCustody(t, w.R, 0, "plan", "-o", plan)
			w.Killed(t, "resource/after-destroy-intent", "apply", plan)

			last := names[len(names)-1] // torn down first
			if e := w.Entry(t, made.ID+"/"+last); e.State != machine.StateRemoving || e.Intent == nil || e.Intent.Kind != machine.IntentResourceDestroy {
				t.Fatalf("the destroy intent was not durable before the kill: %+v", e)
			}
			res := clitest.MustCustody(t, w.R, 0, "resume", "--json")
			t.Logf("resume: %s", res.Stdout)

			lines := w.LogLines(t)
			for _, n := range names {
				h := w.Handle(made.ID, n)
				if c := rtCount(lines, "create "+h); c != 1 {
					t.Errorf("%s created %d times", h, c)
				}
				if c := rtCount(lines, "destroy "+h); c != 1 {
					t.Errorf("%s destroyed %d times after resume, want exactly once: %q", h, c, lines)
				}
				if w.Exists(t, h) {
					t.Errorf("%s still exists after resume", h)
				}
				if e := w.Entry(t, made.ID+"/"+n); e.State != machine.StateTombstoned {
					t.Errorf("entry %s is %s after resume, want tombstoned", e.ID, e.State)
				}
			}
			if st := w.Record(t, made.ID).State; st != "tombstoned" {
				t.Errorf("tree record is %s, want tombstoned", st)
			}
			if _, err := os.Lstat(made.Path); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("tree %s exists after resume (%v)", made.Path, err)
			}
			if got := w.Worktrees(t); len(got) != 1 {
				t.Errorf("git still registers %v", got)
			}
			w.NoIntents(t)
			w.Journal(t)
			clitest.MustCustody(t, w.R, 0, "doctor")
			// Whatever resume left, GC reclaims; nothing is destroyed
			// twice.
			w.GC(t, 0, false)
			lines = w.LogLines(t)
			for _, n := range names {
				h := w.Handle(made.ID, n)
				if c := rtCount(lines, "destroy "+h); c != 1 || w.Exists(t, h) {
					t.Errorf("after resume and gc, %s was destroyed %d times (exists: %v), want exactly once: %q", h, c, w.Exists(t, h), lines)
				}
			}
		})
	}
}

// TestResourceConcurrentResumeDestroysOnce: after a crash between a
// destroy intent and the destroy, resume converges with the external
// effect exactly once, even when two custody processes resume at the same
// time (every mutating command resumes first); neither exits 1.
func TestResourceConcurrentResumeDestroysOnce(t *testing.T) {
	t.Parallel()
	destroy := "sleep 2; echo destroy @resource@ >> {EXT}/log; rm -rf {EXT}/@resource@"
	w := clitest.SetupResources(t, clitest.ResourceDecl("db", "", destroy), fixtures.Options{})
	made := w.New(t, "crash")
	clitest.MustCustody(t, w.R, 0, "finish", made.ID)
	plan := filepath.Join(w.R.Root, "plan.json")
	clitest.MustCustody(t, w.R, 0, "plan", "-o", plan)
	w.Killed(t, "resource/after-destroy-intent", "apply", plan)

	results := rtParallel(t, w.R, w.R.Env(), 2, func(int) []string { return []string{"resume", "--lock-timeout", "60s"} })
	for i := range results {
		if results[i].Code == 1 {
			t.Errorf("resume #%d exited 1:\n%s", i, results[i])
		}
	}
	h := w.Handle(made.ID, "db")
	if c := rtCount(w.LogLines(t), "destroy "+h); c != 1 {
		t.Errorf("%s destroyed %d times by two concurrent resumes, want exactly once: %q", h, c, w.LogLines(t))
	}
}

// --- concurrency and processes -------------------------------------------

// rtParallel runs n custody commands at once in the main checkout with
// environment env, the i-th with args(i), and returns their results in
// order.
func rtParallel(t *testing.T, r *fixtures.Repo, env []string, n int, args func(i int) []string) []clitest.Result {
	t.Helper()
	results := make([]clitest.Result, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = clitest.RunInGoroutine(clitest.Bin(), r, env, args(i)...)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("custody %s (#%d): %v", strings.Join(args(i), " "), i, err)
		}
	}
	return results
}

// TestResourceConcurrentNew: four `custody new` at once make four distinct
// ledger entries and resources.
func TestResourceConcurrentNew(t *testing.T) {
	t.Parallel()
	w := clitest.SetupResources(t, clitest.ResourceDecl("db", "", ""), fixtures.Options{})
	const n = 4
	results := rtParallel(t, w.R, w.R.Env(), n, func(int) []string { return []string{"new", "same", "--json", "--lock-timeout", "60s"} })
	ids := map[string]bool{}
	for i := range n {
		switch {
		case results[i].Code == 3:
			// The tree was made, but the automatic resume at the start
			// saw a sibling's live create intent and reported it.
			t.Errorf("new #%d alongside %d parallel custody new: want exit 0, got 3 (its JSON says ok)", i, n)
		case results[i].Code != 0:
			t.Fatalf("new #%d:\n%s", i, results[i])
		}
		ids[clitest.DecodeResult[steps.NewResult](t, results[i], "new").ID] = true
	}
	if len(ids) != n {
		t.Fatalf("want %d distinct ids, got %v", n, ids)
	}
	entries := w.Ledger(t, true)
	handles := map[string]bool{}
	for _, e := range entries {
		if !ids[e.Worktree] || e.State != machine.StateActive || e.Handle != w.Handle(e.Worktree, "db") {
			t.Errorf("entry %+v", e)
		}
		handles[e.Handle] = true
		if !w.Exists(t, e.Handle) {
			t.Errorf("%s does not exist", e.Handle)
		}
	}
	if len(entries) != n || len(handles) != n {
		t.Errorf("want %d entries with distinct handles, got %d entries, %d handles", n, len(entries), len(handles))
	}
	lines := w.LogLines(t)
	if len(lines) != n {
		t.Errorf("log: want %d creates, got %q", n, lines)
	}
	w.NoIntents(t)
	w.Journal(t)
}

// TestResourcePortsDistinctUnderConcurrentNew: @port@ is collision-checked
// against live worktrees, so no two live worktrees hold the same port,
// even when parallel `custody new` with port_span = 1 make them at once.
// (git is slowed down only to make the race certain.)
func TestResourcePortsDistinctUnderConcurrentNew(t *testing.T) {
	t.Parallel()
	toml := "[worktree]\nport_base = 30000\nport_span = 1\n\n" +
		"[resources.srv]\ncreate = '''echo @port@ >> {EXT}/ports'''\ndestroy = '''true'''\n"
	w := clitest.SetupResources(t, toml, fixtures.Options{})
	results := rtParallel(t, w.R, clitest.SlowGitEnv(t, w.R), 3, func(i int) []string {
		return []string{"new", fmt.Sprintf("p%d", i), "--json", "--lock-timeout", "60s"}
	})
	held := map[int][]string{}
	for i := range results {
		if results[i].Code != 0 {
			continue // refused: every port is held
		}
		made := clitest.DecodeResult[steps.NewResult](t, results[i], "new")
		held[made.Port] = append(held[made.Port], made.ID)
	}
	for port, ids := range held {
		if len(ids) > 1 {
			t.Errorf("live worktrees %v all hold @port@ %d", ids, port)
		}
	}
}

// TestResourceApplyRacingGC: while apply tears down a removed tree's
// resources, `custody resource gc` may reclaim one of them (its worktree
// is provably gone). Apply then counts it as done and does not exit 1;
// every resource is destroyed once.
func TestResourceApplyRacingGC(t *testing.T) {
	t.Parallel()
	slow := "touch {EXT}/b-started; sleep 3; rm -rf {EXT}/@resource@ && echo destroy @resource@ >> {EXT}/log"
	w := clitest.SetupResources(t, clitest.ResourceDecl("a", "", "")+clitest.ResourceDecl("b", "", slow), fixtures.Options{})
	made := w.New(t, "race")
	clitest.MustCustody(t, w.R, 0, "finish", made.ID)
	plan := filepath.Join(w.R.Root, "plan.json")
	clitest.MustCustody(t, w.R, 0, "plan", "-o", plan)

	b := clitest.StartCustody(t, w.R, nil, "apply", plan, "--json")
	clitest.WaitFile(t, filepath.Join(w.Ext, "b-started"), 30*time.Second) // b (torn down first) is being destroyed
	g := clitest.DecodeResult[clitest.GCResult](t, clitest.MustCustody(t, w.R, 0, "resource", "gc", "--json"), "resource gc")
	t.Logf("gc: %v", rtGCOutcomes(g))
	res := b.Wait(t)
	if res.Code == 1 {
		t.Errorf("apply exited 1 because gc reclaimed a sibling resource meanwhile:\n%s", res)
	}
	lines := w.LogLines(t)
	for _, n := range []string{"a", "b"} {
		h := w.Handle(made.ID, n)
		if c := rtCount(lines, "destroy "+h); c != 1 {
			t.Errorf("%s destroyed %d times, want once: %q", h, c, lines)
		}
		if e := w.Entry(t, made.ID+"/"+n); e.State != machine.StateTombstoned {
			t.Errorf("entry %s is %s, want tombstoned", e.ID, e.State)
		}
	}
}

// rtAlive reports whether pid is a live (not zombie) process.
func rtAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && len(s) > i+2 {
		return s[i+2] != 'Z' && s[i+2] != 'X'
	}
	return true
}

func rtPid(t testing.TB, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		t.Fatalf("pid file %s: %q", file, b)
	}
	t.Cleanup(func() {
		if rtAlive(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return pid
}

func rtGone(pid int, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for {
		if !rtAlive(pid) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestResourceBackgroundChild: a create that leaves a background child
// behind does not leave it running after the command returns; a resource
// that is meant to run detaches on purpose and its destroy stops it.
func TestResourceBackgroundChild(t *testing.T) {
	t.Parallel()
	t.Run("reaped", func(t *testing.T) {
		t.Parallel()
		w := clitest.SetupResources(t, clitest.ResourceDecl("srv", "sleep 60 & echo $! > {EXT}/pid; echo create @resource@ >> {EXT}/log", "echo destroy @resource@ >> {EXT}/log"), fixtures.Options{})
		start := time.Now()
		made := w.New(t, "bg")
		took := time.Since(start)
		pid := rtPid(t, filepath.Join(w.Ext, "pid"))
		if !rtGone(pid, 3*time.Second) {
			t.Errorf("the create's background child %d still runs after custody new returned", pid)
		}
		if took > 20*time.Second {
			t.Errorf("custody new took %v: the child's open output held it", took)
		}
		if e := w.Entry(t, made.ID+"/srv"); e.State != machine.StateActive {
			t.Errorf("entry is %s, want active", e.State)
		}
	})
	t.Run("detached-until-destroy", func(t *testing.T) {
		t.Parallel()
		w := clitest.SetupResources(t, clitest.ResourceDecl("srv",
			"setsid sleep 60 </dev/null >/dev/null 2>&1 & echo $! > {EXT}/pid; echo create @resource@ >> {EXT}/log",
			"kill $(cat {EXT}/pid) && echo destroy @resource@ >> {EXT}/log"), fixtures.Options{})
		made := w.New(t, "daemon")
		pid := rtPid(t, filepath.Join(w.Ext, "pid"))
		time.Sleep(300 * time.Millisecond)
		if !rtAlive(pid) {
			t.Fatalf("the detached server %d did not outlive its create", pid)
		}
		w.Vanish(t, made.Path, true)
		if g := w.GC(t, 0, false); len(g.Items) != 1 || g.Items[0].Outcome != "destroyed" {
			t.Fatalf("gc: %+v", g.Items)
		}
		if !rtGone(pid, 3*time.Second) {
			t.Errorf("the destroy did not stop %d", pid)
		}
		h := w.Handle(made.ID, "srv")
		w.WantLog(t, "create "+h, "destroy "+h)
	})
}

// TestResourceOutputAndTimeout: a command's output is kept bounded and
// without URL credentials in the ledger and the journal; a command that
// outlives its timeout is killed and counts as failed.
func TestResourceOutputAndTimeout(t *testing.T) {
	t.Parallel()
	t.Run("output", func(t *testing.T) {
		t.Parallel()
		// The credential is in what the command prints, not in the
		// command (which custody.toml holds as written).
		noisy := "cat {EXT}/url; head -c 100000 /dev/zero | tr '\\0' x; " +
			"mkdir {EXT}/@resource@ && echo create @resource@ >> {EXT}/log"
		w := clitest.SetupResources(t, clitest.ResourceDecl("db", noisy, ""), fixtures.Options{})
		if err := os.WriteFile(filepath.Join(w.Ext, "url"), []byte("postgres://bob:hunter2@db.example.com/app\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		made := w.New(t, "noisy")
		e := w.Entry(t, made.ID+"/db")
		if strings.Contains(e.Evidence.Output, "hunter2") || !strings.Contains(e.Evidence.Output, "db.example.com") {
			t.Errorf("ledger output is not redacted: %.200q", e.Evidence.Output)
		}
		if len(e.Evidence.Output) > 8<<10 {
			t.Errorf("ledger keeps %d bytes of output", len(e.Evidence.Output))
		}
		file := filepath.Join(w.R.Root, "j.jsonl")
		clitest.MustCustody(t, w.R, 0, "journal", "export", "-o", file)
		if b, _ := os.ReadFile(file); bytes.Contains(b, []byte("hunter2")) || len(b) > 64<<10 {
			t.Errorf("journal holds the credential or the whole output (%d bytes)", len(b))
		}
	})
	t.Run("timeout", func(t *testing.T) {
		t.Parallel()
		w := clitest.SetupResources(t, clitest.ResourceDecl("slow", "echo create @resource@ >> {EXT}/log; exec sleep 30", "", "timeout = \"500ms\"", "required = false"), fixtures.Options{})
		start := time.Now()
		made := w.New(t, "slow")
		if took := time.Since(start); took > 15*time.Second {
			t.Errorf("custody new took %v with a 500ms resource timeout", took)
		}
		if e := w.Entry(t, made.ID+"/slow"); e.State != machine.StateFinished || e.Evidence.Outcome != "create-failed" || e.Evidence.ExitCode == 0 {
			t.Errorf("timed-out create: %s %+v", e.State, e.Evidence)
		}
	})
}

// TestResourceCreateLargeOutput: a create that succeeds but prints more
// than the runner's 1 MiB bound is a successful create (exit 0, entry
// active) whose output is kept bounded in the ledger.
func TestResourceCreateLargeOutput(t *testing.T) {
	t.Parallel()
	noisy := "head -c 3000000 /dev/zero | tr '\\0' x; mkdir {EXT}/@resource@ && echo create @resource@ >> {EXT}/log"
	w := clitest.SetupResources(t, clitest.ResourceDecl("db", noisy, ""), fixtures.Options{})
	res := clitest.Custody(t, w.R, "new", "noisy", "--json")
	if res.Code != 0 {
		t.Fatalf("custody new with a create that exits 0 after printing 3 MB: want exit 0, got %d\n%.600s", res.Code, res.Stderr)
	}
	made := clitest.DecodeResult[steps.NewResult](t, res, "new")
	e := w.Entry(t, made.ID+"/db")
	if e.State != machine.StateActive || e.Evidence.ExitCode != 0 {
		t.Errorf("entry: %s exit %d, want active exit 0", e.State, e.Evidence.ExitCode)
	}
	if len(e.Evidence.Output) > 8<<10 {
		t.Errorf("ledger keeps %d bytes of output", len(e.Evidence.Output))
	}
}

// TestResourceGCRecordOrTreeLive: a pruned admin entry alone never makes a
// resource an orphan. While anything is on disk at the tree's exact path,
// orphan GC keeps the resource, with and without --dry-run, and no destroy
// runs. (A live record whose tree vanished is settled: vanished_settle_test.go.)
func TestResourceGCRecordOrTreeLive(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		scene func(t *testing.T, w *clitest.World, path string)
		words string
	}{
		{"tree-present", func(t *testing.T, w *clitest.World, path string) {
			w.Vanish(t, path, true)
			// Someone's plain directory (no worktree) now stands at the path.
			w.R.WriteFile(path, "notes.txt", "mine\n")
		}, "still present"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := clitest.SetupResources(t, clitest.ResourceDecl("db", "", ""), fixtures.Options{})
			made := w.New(t, "kept")
			h := w.Handle(made.ID, "db")
			c.scene(t, w, made.Path)
			if _, err := os.Lstat(filepath.Join(w.R.Dir, ".git", "worktrees", made.ID)); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("the admin entry is present (%v): the scene does not test the guard", err)
			}
			for _, dry := range []bool{true, false} {
				g := w.GC(t, 0, dry)
				if len(g.Items) != 1 || g.Items[0].Outcome != "kept" || g.Items[0].Refusal == nil ||
					g.Items[0].Refusal.Code != machine.CodeWorktreeLive || !strings.Contains(g.Items[0].Refusal.Message, c.words) {
					t.Errorf("gc dry=%v: want kept worktree-live (%s), got %+v", dry, c.words, g.Items)
				}
			}
			if _, ok := rtPlanItemOf(t, w.Plan(t, ""), made.ID+"/db"); ok {
				t.Errorf("plan lists %s/db as an orphan", made.ID)
			}
			w.WantLog(t, "create "+h)
			if !w.Exists(t, h) {
				t.Errorf("%s was destroyed", h)
			}
			if e := w.Entry(t, made.ID+"/db"); e.State != machine.StateActive {
				t.Errorf("entry is %s, want active", e.State)
			}
		})
	}
}

// TestResourceHostileCheckoutPath: a checkout path holding $(…), a
// backtick, quotes and @dir@ reaches a resource command as exactly that
// path wherever @dir@ stands (bare, in double quotes, inside $(…), inside
// an unquoted heredoc), and no code in it runs: the values are passed as
// environment variables frozen with the command, never spliced into it.
func TestResourceHostileCheckoutPath(t *testing.T) {
	t.Parallel()
	name := "x$(touch canary1)`touch canary2`'q\"@dir@"
	create := "printf '%s' @dir@ > {EXT}/bare && printf '%s' \"<@dir@>\" > {EXT}/dq && printf '%s' \"$(printf '%s' @dir@)\" > {EXT}/sub && " +
		"cat > {EXT}/heredoc <<EOF\n@dir@\n@repo@\nEOF\necho create @resource@ >> {EXT}/log"
	w := clitest.SetupResources(t, clitest.ResourceDecl("db", create, ""), fixtures.Options{Name: name})
	res := clitest.Custody(t, w.R, "new", "hostile", "--json")
	if res.Code != 0 {
		t.Fatalf("new in a checkout named %q: %s", name, res)
	}
	made := clitest.DecodeResult[steps.NewResult](t, res, "new")
	for file, want := range map[string]string{"bare": made.Path, "dq": "<" + made.Path + ">", "sub": made.Path, "heredoc": made.Path + "\n" + w.R.Dir + "\n"} {
		if b, err := os.ReadFile(filepath.Join(w.Ext, file)); err != nil || string(b) != want {
			t.Errorf("%s: @dir@ reached the command as %q (%v), want %q", file, b, err, want)
		}
	}
	for _, dir := range []string{made.Path, w.R.Dir, w.Ext} {
		for _, c := range []string{"canary1", "canary2"} {
			if _, err := os.Lstat(filepath.Join(dir, c)); err == nil {
				t.Errorf("code from the checkout path ran: %s/%s exists", dir, c)
			}
		}
	}
	e := w.Entry(t, made.ID+"/db")
	if strings.Contains(e.Create, "touch") || e.Env[machine.TokenEnv("dir")] != made.Path {
		t.Errorf("the frozen create splices values (%q) or its env lacks @dir@ (%q)", e.Create, e.Env)
	}
}

// TestResourceUnsafeToken: a token where its value would be read as code
// (a quoted heredoc, single quotes around a path) is refused when the
// command is frozen, naming the token and what to write instead; nothing
// runs and the ledger stays empty.
func TestResourceUnsafeToken(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, create string }{
		{"quoted-heredoc", "sh <<'EOF'\nrm -rf @dir@/cache\nEOF\necho create >> {EXT}/log"},
		{"single-quotes", "sh -c 'ls @dir@' && echo create >> {EXT}/log"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := clitest.SetupResources(t, clitest.ResourceDecl("db", tt.create, ""), fixtures.Options{Name: "a b"})
			ref := clitest.DecodeError(t, clitest.MustCustody(t, w.R, 1, "new", "tok", "--json"))
			// new reports the declare refusal as its own create-failed.
			if ref.Code != string(machine.CodeCreateFailed) || !strings.Contains(ref.Message, "@dir@ stands in") || !strings.Contains(ref.Message, "$CUSTODY_DIR") {
				t.Errorf("new: want create-failed naming @dir@ and $CUSTODY_DIR, got %+v", ref)
			}
			w.NothingLeft(t)
			w.WantLog(t) // nothing ran
			if got := w.Ledger(t, true); len(got) != 0 {
				t.Errorf("a refused resource is in the ledger: %+v", got)
			}
		})
	}
}
