//go:build linux

package readonly

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/cmd/custody/internal/output"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
)

// mountReadOnly is a shell script that bind-mounts $1 onto itself, remounts
// the bind read-only (in the mount namespace unshare made for it alone),
// changes to $2 and runs the rest of its arguments: one command that sees
// $1 as a read-only file system (EROFS), as a snapshot or a read-only mount
// would show it, while every other process sees it writable.
const mountReadOnly = `set -e
mount --bind "$1" "$1"
mount -o remount,bind,ro "$1" "$1"
cd "$2"
shift 2
exec "$@"`

var (
	readOnlyOnce   sync.Once
	readOnlyPrefix []string // how to run a command under mountReadOnly
	readOnlyWhy    string   // why no way works here
)

// readOnlyRunner returns the argv prefix that runs a command with a
// directory mounted read-only, or skips t saying why this machine cannot:
// as root, a private mount namespace (unshare --mount); as anyone, a user
// namespace whose root may mount (unshare --user --map-root-user --mount).
// Each is probed first: the write it must refuse is refused with EROFS.
func readOnlyRunner(t *testing.T) []string {
	t.Helper()
	readOnlyOnce.Do(func() {
		candidates := [][]string{{"unshare", "--user", "--map-root-user", "--mount"}}
		if os.Geteuid() == 0 {
			candidates = append([][]string{{"unshare", "--mount"}}, candidates...)
		}
		var why []string
		for _, c := range candidates {
			dir, err := os.MkdirTemp("", "custody-ro-probe-")
			if err != nil {
				why = append(why, err.Error())
				continue
			}
			args := append(append(slicesClone(c), "sh", "-c", mountReadOnly, "sh", dir, dir), "sh", "-c", "echo x > probe")
			out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
			_, statErr := os.Lstat(filepath.Join(dir, "probe"))
			os.RemoveAll(dir)
			if err != nil && strings.Contains(string(out), "Read-only file system") && errors.Is(statErr, os.ErrNotExist) {
				readOnlyPrefix = c
				return
			}
			why = append(why, strings.Join(c, " ")+": "+strings.TrimSpace(string(out)))
		}
		readOnlyWhy = strings.Join(why, "; ")
	})
	if readOnlyPrefix == nil {
		t.Skipf("no way to mount a directory read-only for one command on this machine (a mount namespace is needed: unshare --mount as root, or an unprivileged user namespace): %s", readOnlyWhy)
	}
	return readOnlyPrefix
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }

// roCustody runs custody in dir with the fixture's whole directory (the
// repository, its remote, HOME and the archives under it) on a read-only
// file system, stdin as given.
func roCustody(t *testing.T, r *fixtures.Repo, dir, stdin string, args ...string) clitest.Result {
	t.Helper()
	prefix := readOnlyRunner(t)
	argv := append(append(slicesClone(prefix), "sh", "-c", mountReadOnly, "sh", r.Root, dir, clitest.Bin()), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = r.Env()
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	res := clitest.Result{Stdout: out.String(), Stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.Code = ee.ExitCode()
	default:
		t.Fatalf("run custody %s read-only: %v", strings.Join(args, " "), err)
	}
	if strings.Contains(res.Stderr, "panic:") || strings.Contains(res.Stderr, "goroutine ") {
		t.Fatalf("custody %s panicked:\n%s", strings.Join(args, " "), res)
	}
	return res
}

// readOnlyFixture is a repository in every state the read commands show:
// a finished tree a plan removes, an active tree, an archive of it, and a
// tree whose creation was killed after its intent (a holder that is gone).
type readOnlyFixture struct {
	r                    *fixtures.Repo
	finished, active     string // record ids
	activePath           string
	interrupted, archive string
	out                  string // a writable directory outside the repository
}

func newReadOnlyFixture(t *testing.T) readOnlyFixture {
	t.Helper()
	r := fixtures.New(t, fixtures.Options{})
	clitest.MustCustody(t, r, 0, "init")
	f := readOnlyFixture{r: r, out: t.TempDir()}
	f.finished, _ = clitest.NewTree(t, r, "done")
	f.active, f.activePath = clitest.NewTree(t, r, "busy")
	clitest.MustCustody(t, r, 0, "finish", f.finished)
	r.Commit(f.activePath, "wip.txt", "unpublished\n")
	created := clitest.DecodeResult[map[string]any](t, clitest.MustCustody(t, r, 0, "--json", "archive", "create", f.active), "archive create")
	f.archive, _ = created["id"].(string)
	if f.archive == "" {
		t.Fatalf("archive create named no archive: %v", created)
	}
	killed := clitest.RunBin(t, clitest.FailpointBin(), r, r.Dir, []string{"CUSTODY_FAILPOINT=new/after-intent"}, "new", "cut")
	if killed.Code != -1 {
		t.Fatalf("new under new/after-intent was not killed:\n%s", killed)
	}
	list := clitest.DecodeResult[clitest.ListResult](t, clitest.MustCustody(t, r, 0, "--json", "list"), "list")
	for _, rec := range list.Records {
		if rec.State == machine.StateProvisioning {
			f.interrupted = rec.ID
		}
	}
	if f.interrupted == "" {
		t.Fatalf("no record was left provisioning by the killed new: %+v", list.Records)
	}
	// journal verify reads it; export writes the same bytes again.
	clitest.MustCustody(t, r, 0, "journal", "export", "-o", filepath.Join(f.out, "journal.jsonl"))
	return f
}

// state is the state file's bytes.
func (f readOnlyFixture) state(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.r.Dir, ".git", "custody", "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readCommands are the commands that only read, each as run in the main
// checkout (OUT is a writable directory outside the repository).
func (f readOnlyFixture) readCommands() [][]string {
	out := func(name string) string { return filepath.Join(f.out, name) }
	return [][]string{
		{"list"},
		{"list", "--all", "--json"},
		{"show", f.finished},
		{"show", "--json", f.interrupted},
		{"plan", "-o", out("plan.json")},
		{"journal", "export", "-o", out("journal.jsonl")},
		{"journal", "export", "--format", "md"},
		{"journal", "head"},
		{"journal", "verify", out("journal.jsonl")},
		{"journal", "report", "-o", out("report.html")},
		{"doctor"},
		{"doctor", "--json"},
		{"recovered", "list"},
		{"archive", "list"},
		{"archive", "verify", f.archive},
		{"resource", "list"},
		{"resource", "gc", "--dry-run"},
		{"migrate", "status"},
		{"migrate", "discover"},
	}
}

// TestReadOnlyRepositoryReads: every command that only reads, run on the
// writable repository, creates, changes and deletes no file of it (its
// checkouts, git's directory, custody's state) nor of HOME, but the derived
// data a read writes where it can: the content hash cache plan keeps
// (docs/decisions/0228) and the state file's walk stamp (0264);
// run again on a read-only file system (a real EROFS mount), it gives
// exactly what it gave (the same exit code and output; a plan the same
// items), stumbles on nothing, and says on stderr which records carry an
// interrupted intent it leaves for custody resume, which nothing resumed.
func TestReadOnlyRepositoryReads(t *testing.T) {
	t.Parallel()
	readOnlyRunner(t)
	f := newReadOnlyFixture(t)
	cache := filepath.Join(f.r.Dir, ".git", "custody", "cache")
	before := f.state(t)
	stamp := filepath.Join(f.r.Dir, ".git", "custody", "state.db.checked")
	files := snapshot(t, f.r.Root, cache, stamp)
	// The commands write nothing, and what each writes outside the
	// repository it writes by rename, the same bytes each time: they may
	// run together.
	t.Run("each", func(t *testing.T) {
		for _, args := range f.readCommands() {
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				t.Parallel()
				f.readsAlike(t, args)
			})
		}
	})
	if diff := diffSnapshots(files, snapshot(t, f.r.Root, cache, stamp)); diff != "" {
		t.Errorf("the commands that only read changed files of the writable repository:\n%s", diff)
	}
	if !bytes.Equal(before, f.state(t)) {
		t.Errorf("the state file changed")
	}
	show := clitest.DecodeResult[map[string]any](t, clitest.MustCustody(t, f.r, 0, "--json", "show", f.interrupted), "show")
	if show["intent"] == nil {
		t.Errorf("a command that only reads settled %s's intent: %v", f.interrupted, show)
	}
}

// readsAlike runs args on the writable repository, then with it mounted
// read-only, and requires the same answer.
func (f readOnlyFixture) readsAlike(t *testing.T, args []string) {
	rw := clitest.Custody(t, f.r, args...)
	if rw.Code == output.ExitError {
		t.Fatalf("it failed on the writable repository:\n%s", rw)
	}
	var plan string
	if args[0] == "plan" {
		plan = clitest.ReadFile(t, filepath.Join(f.out, "plan.json"))
	}
	ro := roCustody(t, f.r, f.r.Dir, "", args...)
	if ro.Code != rw.Code {
		t.Fatalf("exit %d on a read-only repository, %d on the writable one\nread-only:\n%s\nwritable:\n%s", ro.Code, rw.Code, ro, rw)
	}
	switch {
	case args[0] == "plan":
		if a, b := planItems(t, plan), planItems(t, clitest.ReadFile(t, filepath.Join(f.out, "plan.json"))); a != b {
			t.Errorf("the read-only plan's items differ:\n%s\nwritable:\n%s", b, a)
		}
	case args[0] == "journal" && args[1] == "report":
		// It dates itself.
	case ro.Stdout != rw.Stdout:
		t.Errorf("stdout on a read-only repository differs:\n%s\nwritable:\n%s", ro.Stdout, rw.Stdout)
	}
	opensState := args[0] != "archive" && !(args[0] == "journal" && args[1] == "verify")
	if note := "wait for custody resume: " + f.interrupted + " (create worktree)"; opensState && !strings.Contains(ro.Stderr, note) {
		t.Errorf("no mention of the interrupted intent (%q) on stderr:\n%s", note, ro.Stderr)
	}
	if strings.Contains(ro.Stderr, "read-only") {
		t.Errorf("it stumbled on the read-only file system:\n%s", ro.Stderr)
	}
}

// writeCase is one command that writes, run on the read-only repository.
type writeCase struct {
	args  []string
	dir   string // where it runs ("" the main checkout)
	stdin string
	// path is the exact path the refusal names as read-only.
	path string
}

func (f readOnlyFixture) writeCommands() []writeCase {
	state := filepath.Join(f.r.Dir, ".git", "custody")
	plan := filepath.Join(f.out, "plan.json")
	payload := func(extra string) string {
		return `{"session_id":"s-1","cwd":"` + f.r.Dir + `"` + extra + `}`
	}
	return []writeCase{
		{args: []string{"init"}, path: state},
		{args: []string{"new", "more"}, path: state},
		{args: []string{"finish", f.active}, path: state},
		{args: []string{"reopen", f.finished}, path: state},
		{args: []string{"abandon", f.finished, "--acknowledge-unrecoverable", "HEAD"}, path: state},
		{args: []string{"adopt", f.activePath}, path: state},
		{args: []string{"apply", plan}, path: state},
		{args: []string{"resume"}, path: state},
		{args: []string{"trust"}, path: state},
		{args: []string{"relocate", f.active}, path: state},
		{args: []string{"archive", "create", f.active}, path: state},
		{args: []string{"archive", "prune"}, path: state},
		{args: []string{"recovered", "prune", "--older-than", "1h"}, path: state},
		{args: []string{"resource", "ensure", f.active}, path: state},
		{args: []string{"resource", "gc"}, path: state},
		{args: []string{"migrate", "plan", "-o", filepath.Join(f.out, "migrate.json")}, path: state},
		{args: []string{"doctor", "--salvage"}, path: state},
		{args: []string{"teardown"}, dir: f.activePath, path: state},
		{args: []string{"hook", "worktree-create"}, stdin: payload(`,"name":"agent"`), path: state},
		{args: []string{"integrate", "claude"}, path: f.r.Dir},
		{args: []string{"integrate", "codex"}, path: f.r.Dir},
		{args: []string{"skill", "--out", filepath.Join(f.r.Dir, ".agents", "skills", "custody")}, path: filepath.Join(f.r.Dir, ".agents", "skills", "custody")},
		// A command that reads, asked to write its output inside the
		// read-only repository.
		{args: []string{"plan", "-o", filepath.Join(f.r.Dir, "plan.json")}, path: filepath.Join(f.r.Dir, "plan.json")},
	}
}

// oneParagraph is custody's refusal of a command: one line naming the
// code, then the retry, and nothing else.
var oneParagraph = regexp.MustCompile(`\A(custody [a-z -]+) \[read-only-file-system\]: ([^\n]+)\n\tto retry: ([^\n]+)\n\z`)

// TestReadOnlyRepositoryRefusesWrites: on a read-only file system every
// command that writes is refused in one paragraph with read-only-file-system,
// naming the exact path that is read-only and the mount it is on, saying
// nothing was written and what to do, and retrying with the command itself;
// it exits 1, prints nothing on stdout, and the state file is
// byte-identical. Under --json the refusal is exactly one error envelope on
// stderr. The lease hooks, which never block a session, exit 0 and say it
// in their envelope.
func TestReadOnlyRepositoryRefusesWrites(t *testing.T) {
	t.Parallel()
	readOnlyRunner(t)
	f := newReadOnlyFixture(t)
	clitest.MustCustody(t, f.r, 0, "plan", "-o", filepath.Join(f.out, "plan.json"))
	before := f.state(t)
	t.Run("commands", func(t *testing.T) {
		for _, c := range f.writeCommands() {
			t.Run(strings.Join(c.args, " "), func(t *testing.T) {
				t.Parallel()
				f.refused(t, c)
			})
		}
	})
	t.Run("json", func(t *testing.T) {
		state := filepath.Join(f.r.Dir, ".git", "custody")
		for _, args := range [][]string{{"--json", "new", "more"}, {"--json", "finish", f.active}, {"--json", "resume"}} {
			res := roCustody(t, f.r, f.r.Dir, "", args...)
			body := clitest.DecodeError(t, res)
			want := output.ErrorBody{Code: string(machine.CodeReadOnlyFileSystem), Path: state, Retry: "custody " + strings.Join(args, " ")}
			if body.Code != want.Code || body.Path != want.Path || body.Retry != want.Retry {
				t.Errorf("custody %s: envelope %+v, want code, path and retry %+v", strings.Join(args, " "), body, want)
			}
			if !strings.Contains(body.Message, "mounted read-only at "+f.r.Root) || !strings.Contains(body.Message, "nothing was changed") {
				t.Errorf("custody %s: message %q", strings.Join(args, " "), body.Message)
			}
			var raw map[string]any
			if err := json.Unmarshal([]byte(res.Stderr), &raw); err != nil || raw["version"] != float64(output.EnvelopeVersion) || raw["ok"] != false || len(raw) != 3 {
				t.Errorf("custody %s: envelope %s", strings.Join(args, " "), res.Stderr)
			}
		}
	})
	t.Run("lease hook", func(t *testing.T) {
		res := roCustody(t, f.r, f.activePath, `{"session_id":"s-1","cwd":"`+f.activePath+`"}`, "hook", "session-start")
		if res.Code != 0 || !strings.Contains(res.Stdout, `"code":"read-only-file-system"`) || !strings.Contains(res.Stderr, "[read-only-file-system]") {
			t.Errorf("hook session-start on a read-only repository:\n%s", res)
		}
	})
	if !bytes.Equal(before, f.state(t)) {
		t.Errorf("the state file changed")
	}
}

// refused runs c on the read-only repository and requires its one
// paragraph.
func (f readOnlyFixture) refused(t *testing.T, c writeCase) {
	dir := c.dir
	if dir == "" {
		dir = f.r.Dir
	}
	res := roCustody(t, f.r, dir, c.stdin, c.args...)
	if res.Code != output.ExitError || res.Stdout != "" {
		t.Fatalf("want exit 1 and nothing on stdout\n%s", res)
	}
	m := oneParagraph.FindStringSubmatch(res.Stderr)
	if m == nil {
		t.Fatalf("not one read-only-file-system paragraph:\n%s", res.Stderr)
	}
	msg, retry := m[2], m[3]
	for _, want := range []string{c.path + " is on a read-only file system", "mounted read-only at " + f.r.Root, "nothing was"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the paragraph does not say %q:\n%s", want, msg)
		}
	}
	switch {
	case c.args[0] == "plan":
		if retry != "custody plan -o NEW-FILE" {
			t.Errorf("retry %q, want the plan written elsewhere", retry)
		}
	case c.args[0] == "skill":
		if retry != "custody skill --out DIR" {
			t.Errorf("retry %q, want the skill written elsewhere", retry)
		}
	case retry != "custody "+strings.Join(c.args, " "):
		t.Errorf("retry %q is not the command again", retry)
	}
}

// planItems is a plan file's items, as JSON: what a plan says, without
// when it was made.
func planItems(t *testing.T, b string) string {
	t.Helper()
	var p struct {
		Items json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal([]byte(b), &p); err != nil {
		t.Fatalf("plan file: %v", err)
	}
	return string(p.Items)
}

// snapshot is every entry below root but those at or below skip: its
// path, mode, and for a regular file its size, mtime and bytes; for a
// symlink its target.
func snapshot(t *testing.T, root string, skip ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if slices.Contains(skip, p) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		v := fi.Mode().String()
		switch {
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += " " + fi.ModTime().String() + " " + string(b)
		case fi.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			v += " -> " + target
		}
		out[p] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// diffSnapshots names each path made, removed or changed.
func diffSnapshots(a, b map[string]string) string {
	var lines []string
	for p, v := range a {
		if w, ok := b[p]; !ok {
			lines = append(lines, "removed "+p)
		} else if w != v {
			lines = append(lines, "changed "+p)
		}
	}
	for p := range b {
		if _, ok := a[p]; !ok {
			lines = append(lines, "made "+p)
		}
	}
	return strings.Join(lines, "\n")
}

// TestReadOnlyOlderSchema: a state file of an older schema is upgraded by
// the first command that opens it, one that only reads included; on a
// read-only file system it cannot be, and the command says so in one
// read-only-file-system paragraph naming the file, its schema and the
// mount, with the file byte-identical and no copy made.
func TestReadOnlyOlderSchema(t *testing.T) {
	t.Parallel()
	readOnlyRunner(t)
	r := fixtures.New(t, fixtures.Options{})
	old := clitest.ReadFile(t, clitest.ModuleFile(t, "store/testdata/schema1.db"))
	state := filepath.Join(r.Dir, ".git", "custody", "state.db")
	if err := os.MkdirAll(filepath.Dir(state), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(state, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	res := roCustody(t, r, r.Dir, "", "list")
	m := oneParagraph.FindStringSubmatch(res.Stderr)
	if res.Code != output.ExitError || res.Stdout != "" || m == nil {
		t.Fatalf("list of a schema-1 file on a read-only repository: want one read-only-file-system paragraph and exit 1\n%s", res)
	}
	for _, want := range []string{state + " has schema 1", "mounted read-only at " + r.Root, "changed nothing"} {
		if !strings.Contains(m[2], want) {
			t.Errorf("the paragraph does not say %q:\n%s", want, m[2])
		}
	}
	if got := clitest.ReadFile(t, state); got != old {
		t.Errorf("the state file changed")
	}
	if _, err := os.Lstat(state + ".bak-1"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a copy was made: %v", err)
	}
}

// TestReadOnlyPlanCannotFetch: when a remote advertises commits this
// repository lacks, plan on a read-only file system fetches nothing and
// keeps the tree those commits would prove, saying why (the repository
// cannot take objects there) instead of failing; on the writable
// repository the same plan fetches them and the tree goes.
func TestReadOnlyPlanCannotFetch(t *testing.T) {
	t.Parallel()
	readOnlyRunner(t)
	r := fixtures.New(t, fixtures.Options{})
	clitest.MustCustody(t, r, 0, "init")
	id, _ := clitest.NewTree(t, r, "done")
	clitest.MustCustody(t, r, 0, "finish", id)
	// Someone else publishes on top of main: its tip is not here.
	other := filepath.Join(t.TempDir(), "other")
	r.GitIn(filepath.Dir(other), "clone", "-q", "-b", "main", r.Remote, other)
	tip := r.Commit(other, "theirs.txt", "theirs\n")
	r.Push(other, "main")
	if _, err := r.TryGitIn(r.Dir, "cat-file", "-e", tip); err == nil {
		t.Fatalf("the fixture already has %s", tip)
	}
	before := clitest.ReadFile(t, filepath.Join(r.Dir, ".git", "custody", "state.db"))

	out := filepath.Join(t.TempDir(), "plan.json")
	res := roCustody(t, r, r.Dir, "", "plan", "-o", out)
	if res.Code != 0 {
		t.Fatalf("plan on a read-only repository:\n%s", res)
	}
	item := clitest.PlanItem(t, planFile(t, out), id)
	if item.Action != "keep" || item.Refusal == nil || item.Refusal.Code != machine.CodeRemoteUnavailable ||
		!strings.Contains(item.Refusal.Message, "custody cannot fetch them") || !strings.Contains(item.Refusal.Message, "read-only file system") {
		t.Errorf("the tree whose proof needs the missing commits: %+v", item)
	}
	if _, err := r.TryGitIn(r.Dir, "cat-file", "-e", tip); err == nil {
		t.Errorf("plan on a read-only repository fetched %s", tip)
	}
	if clitest.ReadFile(t, filepath.Join(r.Dir, ".git", "custody", "state.db")) != before {
		t.Errorf("the state file changed")
	}

	clitest.MustCustody(t, r, 0, "plan", "-o", out)
	if item := clitest.PlanItem(t, planFile(t, out), id); item.Action != "remove" {
		t.Errorf("on the writable repository plan did not prove the tree: %+v", item)
	}
}

// planFile is the plan file at p.
func planFile(t *testing.T, p string) machine.Plan {
	t.Helper()
	var plan machine.Plan
	if err := json.Unmarshal([]byte(clitest.ReadFile(t, p)), &plan); err != nil {
		t.Fatalf("plan file %s: %v", p, err)
	}
	return plan
}
