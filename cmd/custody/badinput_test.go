package main

// Bad input: every case exits 1 with one clear error paragraph naming the
// thing and a next step, never panics, and changes nothing. Helpers are
// prefixed bad so they cannot collide with the other test files.

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
	"github.com/google/go-cmp/cmp"
	bolt "go.etcd.io/bbolt"
)

// badWorld is everything of a repository that a refused command must leave
// as it was.
type badWorld struct {
	state    []byte
	worktree []string
	refs     string
	root     fixtures.Snapshot // the managed root, every tree in it
	admin    fixtures.Snapshot // <common>/worktrees
	exclude  []byte
}

func badStatePath(r *fixtures.Repo) string {
	return filepath.Join(r.Dir, ".git", "custody", "state.db")
}

func badCapture(t testing.TB, r *fixtures.Repo) badWorld {
	t.Helper()
	st, err := os.ReadFile(badStatePath(r))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	excl, _ := os.ReadFile(filepath.Join(r.Dir, ".git", "info", "exclude"))
	w := badWorld{state: st, worktree: e2eWorktrees(t, r), refs: r.Refs(), exclude: excl}
	if _, err := os.Lstat(filepath.Join(r.Dir, ".worktrees")); err == nil {
		w.root = r.Snap(filepath.Join(r.Dir, ".worktrees"))
	}
	if _, err := os.Lstat(filepath.Join(r.Dir, ".git", "worktrees")); err == nil {
		w.admin = r.Snap(filepath.Join(r.Dir, ".git", "worktrees"))
	}
	return w
}

func (w badWorld) check(t testing.TB, r *fixtures.Repo, what string) {
	t.Helper()
	now := badCapture(t, r)
	if !bytes.Equal(now.state, w.state) {
		t.Errorf("%s changed the state file (%d bytes, was %d)", what, len(now.state), len(w.state))
	}
	if !cmp.Equal(now.worktree, w.worktree) {
		t.Errorf("%s changed the worktree list:\n%s", what, cmp.Diff(w.worktree, now.worktree))
	}
	if now.refs != w.refs {
		t.Errorf("%s changed refs:\n%s", what, cmp.Diff(w.refs, now.refs))
	}
	if d := w.root.Diff(now.root); d != "" {
		t.Errorf("%s changed the managed root:\n%s", what, d)
	}
	if d := w.admin.Diff(now.admin); d != "" {
		t.Errorf("%s changed git's worktree admin dirs:\n%s", what, d)
	}
	if !bytes.Equal(now.exclude, w.exclude) {
		t.Errorf("%s changed .git/info/exclude", what)
	}
}

// badHuman checks a human error: exit 1, nothing on stdout, one paragraph
// on stderr (no blank line) carrying [code], every want substring and a
// next step.
func badHuman(t testing.TB, res result, code string, want ...string) {
	t.Helper()
	if res.Code != 1 {
		t.Errorf("want exit 1 with a [%s] error paragraph:\n%s", code, res)
		return
	}
	if res.Stdout != "" {
		t.Errorf("stdout must be empty on error:\n%s", res)
	}
	msg := strings.TrimRight(res.Stderr, "\n")
	if msg == "" || strings.Contains(msg, "\n\n") {
		t.Errorf("want one error paragraph on stderr:\n%s", res)
	}
	if !strings.HasPrefix(msg, "custody") {
		t.Errorf("error does not start with the program name:\n%s", res)
	}
	if !strings.Contains(msg, "["+code+"]") {
		t.Errorf("error lacks [%s]:\n%s", code, res)
	}
	if !strings.Contains(msg, "next: ") && !strings.Contains(msg, "to retry: ") {
		t.Errorf("error names no next step:\n%s", res)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("error lacks %q:\n%s", w, res)
		}
	}
}

// badJSON checks the --json form of an error: exit 1, empty stdout, one
// envelope on stderr with code.
func badJSON(t testing.TB, res result, code string) errorBody {
	t.Helper()
	body := decodeError(t, res)
	if body.Code != code {
		t.Errorf("error code %q, want %q:\n%s", body.Code, code, res)
	}
	return body
}

// badSetup makes a repository with one finished, removable tree, one
// active tree and a valid plan file; it returns the plan file.
func badSetup(t *testing.T) (r *fixtures.Repo, plan, removable string) {
	t.Helper()
	r = e2eRepo(t, fixtures.Options{})
	removable, _, _ = e2eMerged(t, r, "done", "topic/done")
	newTree(t, r, "busy")
	plan = filepath.Join(r.Root, "p.json")
	if it := planItem(t, e2ePlan(t, r, plan, 0), removable); it.Action != "remove" {
		t.Fatalf("plan: %+v", it)
	}
	return r, plan, removable
}

// badStateCommands are the commands every state file case runs.
func badStateCommands(plan string) [][]string {
	return [][]string{{"list"}, {"plan"}, {"new", "another"}, {"apply", plan}, {"finish", "nosuch"}, {"init"}}
}

func TestBadStateFile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		code    string
		damage  func(t *testing.T, path string)
		message []string
	}{
		{"Garbage", "state-corrupt", func(t *testing.T, path string) {
			b := bytes.Repeat([]byte("this is not a bbolt file\x00\xff"), 4096)
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}, []string{"corrupt", "nothing was changed", ".corrupt && custody init"}},
		{"ShortGarbage", "state-corrupt", func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte("garbage\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, []string{"corrupt", "nothing was changed"}},
		// Half its size, as a copy cut short would be: below bbolt's
		// high-water mark (pages it has allocated).
		{"TruncatedHalf", "state-corrupt", func(t *testing.T, path string) { badTruncate(t, path, 2) }, []string{"corrupt", "nothing was changed"}},
		// Only the two meta pages survive: every page they point to is gone.
		{"TruncatedToMeta", "state-corrupt", func(t *testing.T, path string) {
			if err := os.Truncate(path, 2*4096); err != nil {
				t.Fatal(err)
			}
		}, []string{"corrupt", "nothing was changed"}},
		{"Empty", "state-corrupt", func(t *testing.T, path string) {
			if err := os.Truncate(path, 0); err != nil {
				t.Fatal(err)
			}
		}, []string{"corrupt", "nothing was changed"}},
		{"SchemaNewer", "schema-newer", func(t *testing.T, path string) { badSetMeta(t, path, "schema", "99") }, []string{"newer", "schema", "99", "nothing was changed"}},
		{"SchemaNotANumber", "state-corrupt", func(t *testing.T, path string) { badSetMeta(t, path, "schema", "one") }, []string{"schema", "nothing was changed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, plan, removable := badSetup(t)
			state := badStatePath(r)
			tc.damage(t, state)
			for _, args := range badStateCommands(plan) {
				what := strings.Join(args, " ")
				// One subtest per command, so a crash in one does not
				// hide the others; they share the damaged repository and
				// each must leave it exactly as it found it.
				t.Run(args[0], func(t *testing.T) {
					before := badCapture(t, r)
					defer before.check(t, r, what)
					res := custody(t, r, args...)
					badHuman(t, res, tc.code, append([]string{state}, tc.message...)...)
					if res.Code != 1 {
						return
					}
					res = custody(t, r, append(args, "--json")...)
					body := badJSON(t, res, tc.code)
					if !strings.Contains(body.Message, state) {
						t.Errorf("%s --json: message does not name %s: %+v", what, state, body)
					}
					if body.Retry == "" {
						t.Errorf("%s --json: no retry: %+v", what, body)
					}
				})
			}
			// The removable tree is still there.
			if _, err := os.Lstat(filepath.Join(r.Dir, ".worktrees", removable)); err != nil {
				t.Errorf("tree %s: %v", removable, err)
			}
		})
	}
}

// badTruncate cuts the file at path to 1/div of its size.
func badTruncate(t *testing.T, path string, div int64) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, fi.Size()/div); err != nil {
		t.Fatal(err)
	}
}

// badSetMeta writes key=value into the state file's meta bucket with bbolt
// directly (there is no CLI for it).
func badSetMeta(t *testing.T, path, key, value string) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		m := tx.Bucket([]byte("meta"))
		if m == nil {
			return errors.New("no meta bucket")
		}
		return m.Put([]byte(key), []byte(value))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestBadStateFileFixedByMovingAside follows the error's advice: moving the
// file aside and running init gives a working (empty) store again.
func TestBadStateFileFixedByMovingAside(t *testing.T) {
	t.Parallel()
	r, _, _ := badSetup(t)
	state := badStatePath(r)
	if err := os.WriteFile(state, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	mustCustody(t, r, 1, "list")
	if err := os.Rename(state, state+".bad"); err != nil {
		t.Fatal(err)
	}
	mustCustody(t, r, 0, "init")
	if recs := listRecords(t, r, false); len(recs) != 0 {
		t.Errorf("fresh store lists %+v", recs)
	}
	if b, _ := os.ReadFile(state + ".bad"); string(b) != "garbage" {
		t.Errorf("the moved-aside file changed")
	}
}

// TestBadStateFileOlderSchema: a state file claiming a schema this custody
// does not know, older than any it knows (0, -7), is an unknown schema
// version: exit 1, and the file is not changed (neither read as schema 1
// by list nor written by new).
func TestBadStateFileOlderSchema(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"0", "-7"} {
		t.Run("schema"+v, func(t *testing.T) {
			t.Parallel()
			r := fixtures.New(t, fixtures.Options{})
			mustCustody(t, r, 0, "init")
			state := filepath.Join(r.Dir, ".git", "custody", "state.db")
			badSetMeta(t, state, "schema", v)
			before := csDigest(t, state)
			for _, args := range [][]string{{"list", "--json"}, {"new", "x", "--json"}} {
				res := custody(t, r, args...)
				if res.Code != 1 {
					t.Errorf("custody %s with schema %s: exit %d, want 1 (unknown schema)\n%s", strings.Join(args, " "), v, res.Code, res)
				}
			}
			if csDigest(t, state) != before {
				t.Errorf("the state file with unknown schema %s was changed", v)
			}
		})
	}
}

func TestBadPlanFile(t *testing.T) {
	t.Parallel()
	r, plan, removable := badSetup(t)
	good, err := os.ReadFile(plan)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(r.Root, "plans")
	if err := os.MkdirAll(filepath.Join(dir, "a-directory.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// Hand edits keep the JSON valid; plan_id then no longer matches.
	edit := func(name string, f func(item map[string]any)) string {
		var doc map[string]any
		if err := json.Unmarshal(good, &doc); err != nil {
			t.Fatal(err)
		}
		for _, it := range doc["items"].([]any) {
			if m := it.(map[string]any); m["id"] == removable {
				f(m)
			}
		}
		b, _ := json.MarshalIndent(doc, "", "  ")
		return write(name, b)
	}
	cases := []struct {
		name, file string
		want       []string
	}{
		{"Garbage", write("garbage.json", []byte("this is not a plan\n")), []string{"not a custody plan"}},
		{"Binary", write("binary.json", []byte{0, 1, 2, 0xff, 0xfe}), nil},
		{"Truncated", write("truncated.json", good[:len(good)/2]), nil},
		{"Empty", write("empty.json", nil), nil},
		{"TrailingData", write("trailing.json", append(append([]byte{}, good...), good...)), []string{"trailing"}},
		{"OtherJSON", write("other.json", []byte(`{"hello":"world"}`)), nil},
		{"WrongFormat", write("format.json", bytes.Replace(good, []byte(`"custody.plan/1"`), []byte(`"custody.plan/9"`), 1)), []string{"format"}},
		{"EditedAction", edit("action.json", func(m map[string]any) { m["action"] = "keep" }), []string{"plan_id", "changed"}},
		{"EditedPath", edit("path.json", func(m map[string]any) { m["path"] = r.Dir }), []string{"plan_id", "changed"}},
		{"UnknownAction", edit("unknown.json", func(m map[string]any) { m["action"] = "shred" }), nil},
		{"Nonexistent", filepath.Join(dir, "nosuch.json"), []string{"no such file"}},
		{"Directory", filepath.Join(dir, "a-directory.json"), []string{"directory"}},
	}
	before := badCapture(t, r)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Not parallel: each case checks the one repository is unchanged.
			res := custody(t, r, "apply", c.file)
			badHuman(t, res, "plan-invalid", append([]string{c.file, "custody plan -o", "nothing was done"}, c.want...)...)
			res = custody(t, r, "apply", c.file, "--json")
			body := badJSON(t, res, "plan-invalid")
			if !strings.Contains(body.Message, c.file) || !strings.Contains(body.Retry, "custody plan") {
				t.Errorf("envelope does not name the file and a retry: %+v", body)
			}
			before.check(t, r, "apply "+c.name)
		})
	}
	// The untouched plan still works afterwards.
	a := e2eApply(t, r, plan, 0)
	if o := applyOutcome(t, a, removable); o.Outcome != "removed" {
		t.Errorf("good plan after the bad ones: %+v", o)
	}
}

// TestBadForgedPlan: a plan edited by someone who also recomputed plan_id
// (so it parses) still cannot remove a tree: apply re-observes and
// re-assesses every item.
func TestBadForgedPlan(t *testing.T) {
	t.Parallel()
	r := e2eRepo(t, fixtures.Options{})
	unpushedID, unpushedPath := newTree(t, r, "unpushed")
	head := r.Commit(unpushedPath, "mine.txt", "only here\n")
	e2eFinish(t, r, unpushedID)
	dirtyID, dirtyPath, _ := e2eMerged(t, r, "dirty", "topic/dirty")
	r.WriteFile(dirtyPath, "scratch.txt", "never committed\n")
	file := filepath.Join(r.Root, "p.json")
	e2ePlan(t, r, file, 3)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var p machine.Plan
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	for i := range p.Items {
		it := &p.Items[i]
		if it.Action != machine.ActionKeep || it.Fingerprint == "" {
			t.Fatalf("plan item %+v", it)
		}
		it.Action = machine.ActionRemove
		it.Proof = &machine.Proof{Kind: machine.ProofAncestry, Remote: "origin", Ref: "refs/heads/main", Head: it.Head}
		it.Refusal, it.Refusals = nil, nil
	}
	p = machine.Seal(p)
	forged, _ := json.MarshalIndent(p, "", "  ")
	if _, err := machine.ParsePlan(forged); err != nil {
		t.Fatalf("the forged plan does not parse: %v", err)
	}
	if err := os.WriteFile(file, forged, 0o644); err != nil {
		t.Fatal(err)
	}
	keptU, keptD := e2eSnapKept(r, unpushedID, unpushedPath), e2eSnapKept(r, dirtyID, dirtyPath)
	a := e2eApply(t, r, file, 3)
	for id, code := range map[string]string{unpushedID: "unpushed-commits", dirtyID: "untracked-files"} {
		o := applyOutcome(t, a, id)
		if o.Outcome != "refused" || o.Refusal == nil || string(o.Refusal.Code) != code {
			t.Errorf("forged removal of %s: %+v, want refused %s", id, o, code)
		}
	}
	e2eAssertKept(t, r, unpushedID, unpushedPath, keptU, keptU.refs)
	e2eAssertKept(t, r, dirtyID, dirtyPath, keptD, keptD.refs)
	if r.BranchTip("custody/"+unpushedID) != head {
		t.Errorf("the unpushed branch moved")
	}
	for _, id := range []string{unpushedID, dirtyID} {
		if st := e2eState(t, r, id); st != "finished" {
			t.Errorf("%s is %s, want finished", id, st)
		}
	}
}

// TestBadOnlyNotInPlan: --only naming an id the plan lacks refuses the
// whole apply.
func TestBadOnlyNotInPlan(t *testing.T) {
	t.Parallel()
	r, plan, removable := badSetup(t)
	before := badCapture(t, r)
	res := custody(t, r, "apply", plan, "--only", "nosuch-123456")
	badHuman(t, res, "not-in-plan", "nosuch-123456", "nothing was done")
	badJSON(t, custody(t, r, "apply", plan, "--only", "nosuch-123456", "--json"), "not-in-plan")
	before.check(t, r, "apply --only nosuch")
	if _, err := os.Lstat(filepath.Join(r.Dir, ".worktrees", removable)); err != nil {
		t.Errorf("tree %s: %v", removable, err)
	}
}

func TestBadBareRepository(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{})
	bare := r.Remote
	before := r.Snap(bare)
	for _, args := range [][]string{{"list"}, {"init"}, {"new", "x"}, {"plan"}} {
		res := custody(t, r, append([]string{"-C", bare}, args...)...)
		badHuman(t, res, "bare-repository", bare)
		res = custody(t, r, append([]string{"-C", bare, "--json"}, args...)...)
		if body := badJSON(t, res, "bare-repository"); body.Path != bare {
			t.Errorf("envelope path %q, want %s", body.Path, bare)
		}
		// Run from inside the bare repository too.
		res = runBin(t, custodyBin, r, filepath.Join(bare, "refs"), nil, args...)
		badHuman(t, res, "bare-repository", bare)
	}
	if d := before.Diff(r.Snap(bare)); d != "" {
		t.Errorf("the bare repository changed:\n%s", d)
	}
}

func TestBadNotARepository(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{})
	dir := filepath.Join(r.Root, "plain dir")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// GIT_CEILING_DIRECTORIES keeps git from finding a repository above
	// the temporary directory.
	extra := []string{"GIT_CEILING_DIRECTORIES=" + r.Root}
	for _, args := range [][]string{{"list"}, {"init"}, {"new", "x"}, {"plan"}, {"finish"}} {
		res := runBin(t, custodyBin, r, r.Root, extra, append([]string{"-C", dir}, args...)...)
		badHuman(t, res, "not-a-repository", dir)
		res = runBin(t, custodyBin, r, dir, extra, append([]string{"--json"}, args...)...)
		badJSON(t, res, "not-a-repository")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("custody wrote into a plain directory: %v", entries)
	}
}

// TestBadChdirMissing: -C naming a directory that does not exist should be
// a typed error that says so, not git's failure to start.
func TestBadChdirMissing(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{})
	missing := filepath.Join(r.Root, "no such dir")
	res := custody(t, r, "-C", missing, "list")
	if res.Code != 1 || !strings.Contains(res.Stderr, missing) {
		t.Fatalf("-C missing dir:\n%s", res)
	}
	if strings.Contains(res.Stderr, "fork/exec") || strings.Contains(res.Stderr, "[error]") {
		t.Errorf("-C to a missing directory reports git failing to start, with the untyped code error:\n%s", res.Stderr)
	}
	badJSON(t, custody(t, r, "-C", missing, "--json", "list"), "not-a-repository")
}

// TestBadOddPath: a main checkout whose path has spaces and non-ASCII
// characters works end to end.
func TestBadOddPath(t *testing.T) {
	t.Parallel()
	r := e2eRepo(t, fixtures.Options{Name: "my repo ä"})
	if !strings.Contains(r.Dir, "my repo ä") {
		t.Fatalf("fixture dir %q", r.Dir)
	}
	res := mustCustody(t, r, 0, "new", "ünïcode name", "--json")
	nr := decodeResult[steps.NewResult](t, res, "new")
	if !strings.HasPrefix(nr.Path, filepath.Join(r.Dir, ".worktrees")+string(os.PathSeparator)) {
		t.Fatalf("new path %q not under %s", nr.Path, r.Dir)
	}
	if fi, err := os.Lstat(nr.Path); err != nil || !fi.IsDir() {
		t.Fatalf("new tree %s: %v", nr.Path, err)
	}
	if nr.Head != r.Head(r.Dir) || r.Head(nr.Path) != nr.Head {
		t.Fatalf("new head %s", nr.Head)
	}
	r.Commit(nr.Path, "fïle with space.txt", "work\n")
	r.Push(nr.Path, "topic/odd")
	// Finish from inside the odd path.
	if res := runBin(t, custodyBin, r, nr.Path, nil, "finish"); res.Code != 0 {
		t.Fatalf("finish inside: %s", res)
	}
	kID, kPath := newTree(t, r, "kept one")
	r.WriteFile(kPath, "ünsaved notes.txt", "mine\n")
	e2eFinish(t, r, kID)
	kept := e2eSnapKept(r, kID, kPath)

	file := filepath.Join(r.Root, "plän file.json")
	p := e2ePlan(t, r, file, 3)
	if it := planItem(t, p, nr.ID); it.Action != "remove" || it.Path != nr.Path {
		t.Fatalf("plan: %+v", it)
	}
	if it := planItem(t, p, kID); it.Action != "keep" || it.Refusal.Code != "untracked-files" || it.Refusal.Path != kPath {
		t.Fatalf("plan: %+v", it)
	}
	// Human plan quotes the odd plan file name in its next step.
	if res := mustCustody(t, r, 3, "plan", "-o", file); !strings.Contains(res.Stdout, "'"+file+"'") {
		t.Errorf("human plan does not quote the file:\n%s", res.Stdout)
	}
	p = e2ePlan(t, r, file, 3)
	a := e2eApply(t, r, file, 0)
	if o := applyOutcome(t, a, nr.ID); o.Outcome != "removed" {
		t.Fatalf("apply: %+v", o)
	}
	e2eAssertRemoved(t, r, nr.ID, nr.Path)
	e2eAssertKept(t, r, kID, kPath, kept, e2eDropRef(kept.refs, "refs/heads/custody/"+nr.ID))
	// And through -C from elsewhere.
	res = runBin(t, custodyBin, r, r.Root, nil, "-C", r.Dir, "list", "--all", "--json")
	l := decodeResult[listResult](t, res, "list")
	if len(l.Records) != 2 {
		t.Errorf("list -C: %+v", l.Records)
	}
	if _, err := os.Lstat(filepath.Join(r.Dir, ".git", "custody", "state.db")); err != nil {
		t.Errorf("state file: %v", err)
	}
	if !slices.Contains(e2eWorktrees(t, r), kPath) {
		t.Errorf("kept tree unregistered")
	}
}

// TestBadOddPathNewline: a repository whose path holds a newline works as
// paths with spaces and non-ASCII characters do: init succeeds and new
// makes its tree under the main checkout.
func TestBadOddPathNewline(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{Name: "two\nlines"})
	if res := custody(t, r, "init"); res.Code != 0 {
		t.Fatalf("init in %q: %s", r.Dir, res)
	}
	res := mustCustody(t, r, 0, "new", "x", "--json")
	nr := decodeResult[steps.NewResult](t, res, "new")
	if !strings.HasPrefix(nr.Path, r.Dir+string(os.PathSeparator)) {
		t.Errorf("new made %q, not under %q", nr.Path, r.Dir)
	}
}

func TestBadUsage(t *testing.T) {
	t.Parallel()
	r := e2eRepo(t, fixtures.Options{})
	newTree(t, r, "there")
	before := badCapture(t, r)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"UnknownCommand", []string{"frobnicate"}, "frobnicate"},
		{"UnknownFlag", []string{"list", "--frobnicate"}, "--frobnicate"},
		{"UnknownGlobalFlag", []string{"--frobnicate", "list"}, "--frobnicate"},
		{"MissingArgument", []string{"apply"}, "planfile"},
		{"MissingName", []string{"new"}, "name"},
		{"ExtraArgument", []string{"list", "extra"}, "extra"},
		{"BadDuration", []string{"--lock-timeout", "soon", "list"}, "soon"},
		{"NoCommand", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := custody(t, r, tc.args...)
			want := []string{"custody --help"}
			if tc.want != "" {
				want = append(want, tc.want)
			}
			badHuman(t, res, "usage", want...)
			res = custody(t, r, append(tc.args, "--json")...)
			body := badJSON(t, res, "usage")
			if tc.want != "" && !strings.Contains(body.Message, tc.want) {
				t.Errorf("envelope message %q lacks %q", body.Message, tc.want)
			}
			before.check(t, r, tc.name)
		})
	}
}
