package clitest

// A repository whose custody.toml declares resources acting on an
// external directory, with a log of every command they ran.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/output"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/store"
	"github.com/google/go-cmp/cmp"
)

// World is one repository with its custody.toml and the external
// directory its resources act on.
type World struct {
	R    *fixtures.Repo
	Ext  string // outside the repository
	Log  string // ext/log: one line per command run
	Slug string
}

// SetupResources makes a fixture repository, writes custody.toml (with {EXT}
// replaced by the external directory) into the main checkout and runs
// custody init.
func SetupResources(t *testing.T, toml string, opt fixtures.Options) *World {
	t.Helper()
	r := fixtures.New(t, opt)
	ext, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := &World{R: r, Ext: ext, Log: filepath.Join(ext, "log"), Slug: machine.SanitizeSlug(filepath.Base(r.Dir))}
	if slug := declaredSlug(toml); slug != "" {
		w.Slug = slug
	}
	WriteTrusted(t, r, w.Expand(toml))
	MustCustody(t, r, 0, "init")
	return w
}

// declaredSlug reads a declared `slug = "..."` back out of toml ("" when
// there is none).
func declaredSlug(toml string) string {
	for _, l := range strings.Split(toml, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "slug = "); ok {
			return machine.SanitizeSlug(strings.Trim(v, `"'`))
		}
	}
	return ""
}

// Expand replaces {EXT} in s with the external directory.
func (w *World) Expand(s string) string { return strings.ReplaceAll(s, "{EXT}", w.Ext) }

// Handle is the handle of resource name of tree id.
func (w *World) Handle(id, name string) string { return machine.Handle(w.Slug, id, name) }

// ResourceDecl declares a resource whose create makes {EXT}/<handle>, whose
// destroy removes it and whose ensure checks it, each logging a line.
// create and destroy replace the defaults when not empty; extra lines
// (required = false, ...) are appended.
func ResourceDecl(name, create, destroy string, extra ...string) string {
	if create == "" {
		create = "mkdir {EXT}/@resource@ && echo create @resource@ >> {EXT}/log"
	}
	if destroy == "" {
		destroy = "rm -rf {EXT}/@resource@ && echo destroy @resource@ >> {EXT}/log"
	}
	return fmt.Sprintf("[resources.%s]\ncreate = '''%s'''\ndestroy = '''%s'''\nensure = '''test -d {EXT}/@resource@ && echo ensure @resource@ >> {EXT}/log'''\n%s\n",
		name, create, destroy, strings.Join(extra, "\n"))
}

// LogLines returns the log, one command per line (nil when nothing ran).
func (w *World) LogLines(t testing.TB) []string {
	t.Helper()
	b, err := os.ReadFile(w.Log)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

// WantLog checks the external log is exactly want.
func (w *World) WantLog(t testing.TB, want ...string) {
	t.Helper()
	if d := cmp.Diff(want, w.LogLines(t)); d != "" {
		t.Errorf("external log (-want +got):\n%s", d)
	}
}

// Exists reports whether {EXT}/<handle> exists.
func (w *World) Exists(t testing.TB, handle string) bool {
	t.Helper()
	_, err := os.Lstat(filepath.Join(w.Ext, handle))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

// New runs custody new name --json and returns what it made.
func (w *World) New(t testing.TB, name string) steps.NewResult {
	t.Helper()
	return DecodeResult[steps.NewResult](t, MustCustody(t, w.R, 0, "new", name, "--json"), "new")
}

// Ledger returns resource list --json (--all with all).
func (w *World) Ledger(t testing.TB, all bool) []machine.Resource {
	t.Helper()
	args := []string{"resource", "list", "--json"}
	if all {
		args = append(args, "--all")
	}
	return DecodeResult[ResourceListResult](t, MustCustody(t, w.R, 0, args...), "resource list").Resources
}

// Entry returns ledger entry id (from resource list --all), failing the
// test when there is none.
func (w *World) Entry(t testing.TB, id string) machine.Resource {
	t.Helper()
	for _, r := range w.Ledger(t, true) {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("the ledger holds no %s: %+v", id, w.Ledger(t, true))
	return machine.Resource{}
}

// Records returns list --all --json.
func (w *World) Records(t testing.TB) []output.ListEntry {
	t.Helper()
	return ListRecords(t, w.R, true)
}

// Record returns record id of list --all --json.
func (w *World) Record(t testing.TB, id string) output.ListEntry {
	t.Helper()
	return ListRecord(t, w.R, id)
}

// NoIntents checks that no record and no ledger entry carries an intent.
func (w *World) NoIntents(t testing.TB) {
	t.Helper()
	for _, rec := range w.Records(t) {
		if rec.Intent != nil {
			t.Errorf("record %s still carries a %s intent", rec.ID, rec.Intent.Kind)
		}
	}
	for _, r := range w.Ledger(t, true) {
		if r.Intent != nil {
			t.Errorf("ledger entry %s still carries a %s intent", r.ID, r.Intent.Kind)
		}
	}
}

// Worktrees lists the paths git registers (main checkout first).
func (w *World) Worktrees(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(w.R.Git("worktree", "list", "--porcelain"), "\n") {
		if p, ok := strings.CutPrefix(l, "worktree "); ok {
			out = append(out, p)
		}
	}
	return out
}

// Journal exports the journal, verifies it up to the store's chain head
// and returns its entries.
func (w *World) Journal(t testing.TB) []store.Entry {
	t.Helper()
	return JournalEntries(t, w.R)
}

// RemoveTree finishes id, plans, and applies the plan; it returns the
// apply result.
func (w *World) RemoveTree(t testing.TB, id string, wantApply int) steps.ApplyResult {
	t.Helper()
	MustCustody(t, w.R, 0, "finish", id)
	plan := filepath.Join(w.R.Root, "plan-"+id+".json")
	MustCustody(t, w.R, 0, "plan", "-o", plan)
	return DecodeResult[steps.ApplyResult](t, MustCustody(t, w.R, wantApply, "apply", plan, "--json"), "apply")
}

// Vanish removes a tree the hard way: rm -rf, then (with prune) git
// worktree prune. Its record stays as it was: custody finds the tree
// vanished (decision 0226).
func (w *World) Vanish(t testing.TB, path string, prune bool) {
	t.Helper()
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	if prune {
		w.R.Git("worktree", "prune")
	}
}

// GC runs resource gc --json (--dry-run with dry), requires exit want and
// returns its result.
func (w *World) GC(t testing.TB, want int, dry bool) GCResult {
	t.Helper()
	args := []string{"resource", "gc", "--json"}
	if dry {
		args = append(args, "--dry-run")
	}
	return DecodeResult[GCResult](t, MustCustody(t, w.R, want, args...), "resource gc")
}

// NothingLeft checks a rolled-back `custody new`: no tree, no
// registration, no custody branch, the record tombstoned.
func (w *World) NothingLeft(t testing.TB) output.ListEntry {
	t.Helper()
	recs := w.Records(t)
	if len(recs) != 1 {
		t.Fatalf("want one record, got %+v", recs)
	}
	rec := recs[0]
	if rec.State != "tombstoned" {
		t.Errorf("record %s is %s, want tombstoned", rec.ID, rec.State)
	}
	if _, err := os.Lstat(rec.Path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s still exists (%v)", rec.Path, err)
	}
	if got := w.Worktrees(t); len(got) != 1 {
		t.Errorf("git registers %v, want only the main checkout", got)
	}
	if refs := w.R.Git("for-each-ref", "--format=%(refname)", "refs/heads/custody/"); refs != "" {
		t.Errorf("custody branches left: %s", refs)
	}
	if _, err := os.Lstat(filepath.Join(w.R.Dir, ".git", "worktrees", rec.ID)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("admin entry of %s left (%v)", rec.ID, err)
	}
	w.NoIntents(t)
	return rec
}

// Plan runs plan --json (-o file unless file is empty), requires exit 0
// or 3 and returns the plan's items.
func (w *World) Plan(t testing.TB, file string) []machine.PlanItem {
	t.Helper()
	args := []string{"plan", "--json"}
	if file != "" {
		args = append(args, "-o", file)
	}
	res := Custody(t, w.R, args...)
	if res.Code != 0 && res.Code != 3 {
		t.Fatalf("custody plan: %s", res)
	}
	return DecodeResult[machine.Plan](t, res, "plan").Items
}

// Killed runs the failpoint build at point and requires SIGKILL.
func (w *World) Killed(t testing.TB, point string, args ...string) {
	t.Helper()
	if !slices.Contains(steps.Failpoints(), point) {
		t.Fatalf("%s is not a declared failpoint", point)
	}
	res := RunBin(t, failpointBin, w.R, w.R.Dir, []string{"CUSTODY_FAILPOINT=" + point}, args...)
	if res.Code != -1 {
		t.Fatalf("custody %s with CUSTODY_FAILPOINT=%s: want SIGKILL, got\n%s", strings.Join(args, " "), point, res)
	}
}
