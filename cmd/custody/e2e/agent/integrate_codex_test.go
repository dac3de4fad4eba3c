//go:build unix

package agent

// custody integrate codex and custody teardown against real git and real
// resource commands: the scripts custody writes into the Codex app's
// environment.toml are read back from the file and run as the app runs
// them, bare commands in the tree. Helpers are prefixed cx.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps/agents"
	toml "github.com/pelletier/go-toml/v2"
)

// cxScripts reads [setup].script and [cleanup].script from the file at path.
func cxScripts(t *testing.T, path string) (setup, cleanup string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Version int
		Name    string
		Setup   struct{ Script string }
		Cleanup struct{ Script string }
	}
	if err := toml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("the file custody wrote does not decode: %v\n%s", err, b)
	}
	if doc.Version == 0 || doc.Name == "" {
		t.Errorf("the file lacks the version and name the Codex app requires:\n%s", b)
	}
	return doc.Setup.Script, doc.Cleanup.Script
}

// cxRun runs script as the Codex app does: sh -c, in dir, no stdin, custody
// on PATH.
func cxRun(t *testing.T, w *clitest.World, dir, script string) clitest.Result {
	t.Helper()
	return clitest.RunBin(t, "sh", w.R, dir, []string{clitest.PathEnv(filepath.Dir(clitest.Bin()))}, "-c", script)
}

// cxStat lstats path; os.SameFile on two of them tells whether the file
// was replaced (an atomic rename makes a new file).
func cxStat(t *testing.T, path string) os.FileInfo {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

// TestCodexScriptsRunFromTheFile: integrate codex writes a whole file into
// a checkout without one; its literal setup script, run as a bare command
// in a tree, ensures the tree's resources, and its literal cleanup script
// destroys them; teardown run again finds nothing left.
func TestCodexScriptsRunFromTheFile(t *testing.T) {
	t.Parallel()
	w := clitest.SetupResources(t, clitest.ResourceDecl("db", "", "")+clitest.ResourceDecl("cache", "", ""), fixtures.Options{})
	made := w.New(t, "codex")
	db, cache := w.Handle(made.ID, "db"), w.Handle(made.ID, "cache")

	res := clitest.DecodeResult[agents.IntegrateCodexResult](t, clitest.MustCustody(t, w.R, 0, "integrate", "codex", "--json"), "integrate codex")
	path := filepath.Join(w.R.Dir, ".codex", "environments", "environment.toml")
	if res.Path != path || !res.Created || !res.Written {
		t.Fatalf("integrate codex: %+v", res)
	}
	setup, cleanup := cxScripts(t, path)
	if setup != agents.CodexSetupScript || cleanup != agents.CodexCleanupScript {
		t.Fatalf("scripts written: setup %q cleanup %q", setup, cleanup)
	}

	sub := filepath.Join(made.Path, "deep", "er")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if sh := cxRun(t, w, made.Path, setup); sh.Code != 0 {
		t.Fatalf("the setup script %q failed in the tree:\n%s", setup, sh)
	}
	w.WantLog(t, "create "+db, "create "+cache, "ensure "+db, "ensure "+cache)

	sh := cxRun(t, w, sub, cleanup)
	if sh.Code != 0 {
		t.Fatalf("the cleanup script %q failed in the tree:\n%s", cleanup, sh)
	}
	w.WantLog(t, "create "+db, "create "+cache, "ensure "+db, "ensure "+cache, "destroy "+cache, "destroy "+db)
	if w.Exists(t, db) || w.Exists(t, cache) {
		t.Errorf("teardown left a resource behind")
	}
	for _, h := range []string{db, cache} {
		if !strings.Contains(sh.Stdout, "destroyed "+h+" (exit 0)") {
			t.Errorf("teardown does not say it destroyed %s:\n%s", h, sh)
		}
	}
	for _, r := range w.Ledger(t, true) {
		if r.State != machine.StateTombstoned {
			t.Errorf("ledger entry %s is %s after teardown, want tombstoned", r.ID, r.State)
		}
	}
	// The tree itself is left alone; teardown again has nothing to do.
	if _, err := os.Lstat(filepath.Join(made.Path, ".git")); err != nil {
		t.Errorf("teardown touched the tree: %v", err)
	}
	again := cxRun(t, w, made.Path, cleanup)
	if again.Code != 0 || !strings.Contains(again.Stdout, made.ID+" has no resources to destroy") {
		t.Errorf("teardown of a tree with nothing left:\n%s", again)
	}
	w.WantLog(t, "create "+db, "create "+cache, "ensure "+db, "ensure "+cache, "destroy "+cache, "destroy "+db)
}

// TestCodexKeepsThePersonsFile: a customised cleanup script, comments and
// the app's actions survive byte for byte; setup is added; the person's
// cleanup is named as running without custody (exit 3); a second run
// changes no byte and does not even replace the file. With --merge the
// cleanup script, run as the app runs it, destroys the tree's resources
// and still runs the person's line; --remove gives back the file.
func TestCodexKeepsThePersonsFile(t *testing.T) {
	t.Parallel()
	w := clitest.SetupResources(t, clitest.ResourceDecl("db", "", ""), fixtures.Options{})
	made := w.New(t, "mine")
	app := "# THIS IS AUTOGENERATED. DO NOT EDIT MANUALLY\nversion = 1\nname = \"shop\"\n\n" +
		"# my own cleanup, not custody's\n[cleanup]\nscript = '''\necho mine >> " + w.Ext + "/log\n'''  # keep\n\n" +
		"[[actions]]\nname = \"Run\"\nicon = \"run\"\ncommand = \"npm start\"\n"
	path := filepath.Join(w.R.Dir, ".codex", "environments", "environment.toml")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(app), 0o600); err != nil {
		t.Fatal(err)
	}
	res := clitest.DecodeResult[agents.IntegrateCodexResult](t, clitest.MustCustody(t, w.R, 3, "integrate", "codex", "--json"), "integrate codex")
	if !res.Written || res.Created || len(res.Lacking) != 1 || res.Lacking[0] != "cleanup" || res.Refusal == nil || res.Refusal.Code != machine.CodeCodexScriptOwn {
		t.Fatalf("integrate codex: %+v", res)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := app + "\n[setup] # added by custody integrate codex\nscript = \"" + agents.CodexSetupScript + "\"\n"; string(b) != want {
		t.Fatalf("the file after integrate:\n%s\nwant:\n%s", b, want)
	}
	if fi, _ := os.Lstat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("the file's mode changed to %v", fi.Mode().Perm())
	}

	before := cxStat(t, path)
	out := clitest.MustCustody(t, w.R, 3, "integrate", "codex")
	if !strings.Contains(out.Stdout, "is current; nothing written") || !strings.Contains(out.Stdout, "own       cleanup.script") {
		t.Errorf("a second integrate:\n%s", out)
	}
	again, _ := os.ReadFile(path)
	if string(again) != string(b) || !os.SameFile(before, cxStat(t, path)) {
		t.Errorf("a second integrate changed or replaced the file")
	}
	clitest.MustCustody(t, w.R, 1, "integrate", "codex", "--check")

	// The person's cleanup runs instead of custody's: custody never
	// swapped it for its own.
	_, cleanup := cxScripts(t, path)
	if sh := cxRun(t, w, made.Path, cleanup); sh.Code != 0 {
		t.Fatalf("the person's cleanup script failed:\n%s", sh)
	}
	db := w.Handle(made.ID, "db")
	w.WantLog(t, "create "+db, "mine")

	// Merged, the cleanup runs custody's line first, then the person's.
	clitest.MustCustody(t, w.R, 0, "integrate", "codex", "--merge")
	clitest.MustCustody(t, w.R, 0, "integrate", "codex", "--check")
	_, cleanup = cxScripts(t, path)
	if sh := cxRun(t, w, made.Path, cleanup); sh.Code != 0 {
		t.Fatalf("the merged cleanup script %q failed:\n%s", cleanup, sh)
	}
	w.WantLog(t, "create "+db, "mine", "destroy "+db, "mine")
	clitest.MustCustody(t, w.R, 0, "integrate", "codex", "--remove")
	if back, _ := os.ReadFile(path); string(back) != app {
		t.Errorf("--remove does not give back the person's file:\n%s\nwant:\n%s", back, app)
	}
}

// TestCodexRefusesWhatItCannotEdit: a malformed file, a symlink and --check
// on a stale file are refused with exit 1, and nothing is written.
func TestCodexRefusesWhatItCannotEdit(t *testing.T) {
	t.Parallel()
	w := clitest.SetupResources(t, "", fixtures.Options{})
	dir := filepath.Join(w.R.Dir, ".codex", "environments")
	path := filepath.Join(dir, "environment.toml")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"not toml":  "version = 1\n[setup\nscript = 'x'\n",
		"duplicate": "[setup]\nscript = 'a'\n[setup]\nscript = 'b'\n",
		"array":     "[[cleanup]]\nscript = 'a'\n",
	} {
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		res := clitest.MustCustody(t, w.R, 1, "integrate", "codex")
		if !strings.Contains(res.Stderr, "[codex-environment-invalid]: "+path+" cannot be edited safely, so nothing was written") ||
			!strings.Contains(res.Stderr, "\tto retry: custody integrate codex\n") {
			t.Errorf("%s: the refusal does not name the file and the retry:\n%s", name, res)
		}
		if b, _ := os.ReadFile(path); string(b) != body {
			t.Errorf("%s: the refused file was changed:\n%s", name, b)
		}
	}

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(w.R.Root, "elsewhere.toml"), path); err != nil {
		t.Fatal(err)
	}
	res := clitest.MustCustody(t, w.R, 1, "integrate", "codex", "--json")
	if !strings.Contains(res.Stderr, `"code":"codex-environment-invalid"`) || !strings.Contains(res.Stderr, "symlink") {
		t.Errorf("a symlinked file: %s", res)
	}
	if _, err := os.Lstat(filepath.Join(w.R.Root, "elsewhere.toml")); !os.IsNotExist(err) {
		t.Errorf("custody wrote through the symlink: %v", err)
	}

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("version = 1\nname = \"x\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res = clitest.MustCustody(t, w.R, 1, "integrate", "codex", "--check")
	if !strings.Contains(res.Stderr, "[codex-environment-stale]: "+path+" lacks custody's line in setup, cleanup (the app runs those scripts without custody)") {
		t.Errorf("--check on a stale file:\n%s", res)
	}
	if b, _ := os.ReadFile(path); string(b) != "version = 1\nname = \"x\"\n" {
		t.Errorf("--check wrote:\n%s", b)
	}
}

// TestTeardownOutsideATree: teardown in the main checkout is refused with
// exit 1 and destroys nothing.
func TestTeardownOutsideATree(t *testing.T) {
	t.Parallel()
	w := clitest.SetupResources(t, clitest.ResourceDecl("db", "", ""), fixtures.Options{})
	made := w.New(t, "kept")
	res := clitest.MustCustody(t, w.R, 1, "teardown")
	if !strings.Contains(res.Stderr, "[not-in-worktree]: ") {
		t.Errorf("teardown outside a tree:\n%s", res)
	}
	if !w.Exists(t, w.Handle(made.ID, "db")) {
		t.Errorf("teardown outside a tree destroyed a resource")
	}
}
