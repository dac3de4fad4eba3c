//go:build unix

package agent

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
	"github.com/custody-sh/custody/steps/agents"
)

// ccCommand is the command line custody's Claude Code settings run for
// event (agents.ClaudeHooks), exactly as written into settings.json.
func ccCommand(t *testing.T, event string) string {
	t.Helper()
	for _, h := range agents.ClaudeHooks() {
		if h.Event == event {
			return h.Command
		}
	}
	t.Fatalf("custody writes no %s hook", event)
	return ""
}

// ccPayload is the payload Claude Code sends for event
// (testdata/claude/EVENT.json), with its placeholders filled in.
func ccPayload(t *testing.T, r *fixtures.Repo, event, session, cwd, tree string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "claude", event+".json"))
	if err != nil {
		t.Fatal(err)
	}
	str := func(s string) string {
		q, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		return string(q[1 : len(q)-1])
	}
	return []byte(strings.NewReplacer("@SESSION@", str(session), "@HOME@", str(r.Home), "@CWD@", str(cwd), "@TREE@", str(tree)).Replace(string(b)))
}

// ccRun is one hook as Claude Code runs it.
type ccRun struct {
	Code    int
	Stdout  string
	Stderr  string
	Elapsed time.Duration
}

// ccHook runs command as Claude Code runs a command hook: `/bin/sh -c
// COMMAND` in cwd, the payload on its stdin and stdin closed after it,
// started by a parent process standing in for the agent whose own working
// directory is cwd too. agent is shell code the agent runs first (e.g.
// opening a file it then holds while the hook runs).
func ccHook(t *testing.T, r *fixtures.Repo, cwd, command string, payload []byte, agent string) ccRun {
	t.Helper()
	pf := filepath.Join(t.TempDir(), "payload.json")
	if err := os.WriteFile(pf, payload, 0o644); err != nil {
		t.Fatal(err)
	}
	script := `cd "$1" || exit 99
` + agent + `
cat "$2" | /bin/sh -c "$3"
st=$?
exit $st`
	cmd := exec.Command("/bin/sh", "-c", script, "agent", cwd, pf, command)
	cmd.Env = append(r.Env(), "PATH="+filepath.Dir(clitest.Bin())+string(os.PathListSeparator)+os.Getenv("PATH"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	run := ccRun{Stdout: out.String(), Stderr: errb.String(), Elapsed: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		run.Code = ee.ExitCode()
	default:
		t.Fatalf("run the agent: %v", err)
	}
	if run.Code == 99 {
		t.Fatalf("the agent could not enter %s", cwd)
	}
	if strings.Contains(run.Stderr, "panic:") || strings.Contains(run.Stderr, "goroutine ") {
		t.Fatalf("custody panicked:\n%s", run.Stderr)
	}
	return run
}

// ccOneLine fails unless stderr is exactly one line holding each of want.
func ccOneLine(t *testing.T, what, stderr string, want ...string) {
	t.Helper()
	if strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
		t.Errorf("%s: stderr is not one line:\n%q", what, stderr)
	}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			t.Errorf("%s: stderr does not say %q:\n%s", what, w, stderr)
		}
	}
}

// ccState is the state of record id, as custody list reports it.
func ccState(t *testing.T, r *fixtures.Repo, id string) machine.State {
	t.Helper()
	list := clitest.DecodeResult[struct {
		Records []machine.Record `json:"records"`
	}](t, clitest.MustCustody(t, r, 0, "list", "--json"), "list")
	for _, rec := range list.Records {
		if rec.ID == id {
			return rec.State
		}
	}
	return ""
}

// TestClaudeWorktreeRemoveAsClaudeRunsIt runs the WorktreeRemove hook
// custody writes into Claude Code's settings exactly as Claude Code runs
// it: through /bin/sh -c, in the tree, under an agent process standing in
// the tree too. The agent and its hook shell asked for the removal, so
// where they stand does not keep the tree; everything else still does,
// the agent's own open file included, and a kept tree is reported with a
// non-zero exit and one line, loses nothing and is active again.
func TestClaudeWorktreeRemoveAsClaudeRunsIt(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{})
	clitest.MustCustody(t, r, 0, "init")
	remove := ccCommand(t, "WorktreeRemove")
	run := func(path, session, command, agent string) ccRun {
		t.Helper()
		return ccHook(t, r, path, command, ccPayload(t, r, "WorktreeRemove", session, path, path), agent)
	}
	gone := func(what, path string, res ccRun) {
		t.Helper()
		if res.Code != 0 || res.Stderr != "" {
			t.Errorf("%s: exit %d, stderr %q; want 0 and nothing on stderr", what, res.Code, res.Stderr)
		}
		if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: the tree is still there (%v)", what, err)
		}
	}
	kept := func(what, id, path string, res ccRun, code machine.Code) {
		t.Helper()
		if res.Code != 3 {
			t.Errorf("%s: exit %d, want 3 (kept)\n%s", what, res.Code, res.Stderr)
		}
		ccOneLine(t, what, res.Stderr, "kept "+id, "["+string(code)+"]", "to let it go: ")
		if _, err := os.Lstat(path); err != nil {
			t.Errorf("%s: the kept tree is gone: %v", what, err)
		}
		if s := ccState(t, r, id); s != machine.StateActive {
			t.Errorf("%s: the kept tree is %s, want active again", what, s)
		}
	}

	// A clean tree whose HEAD main holds: removed, exit 0, nothing said.
	id, path := clitest.NewTree(t, r, "clean")
	gone("a clean pushed tree", path, run(path, "s-clean", remove, ""))
	if s := ccState(t, r, id); s != "" && s != machine.StateTombstoned {
		t.Errorf("the removed tree's record is %s", s)
	}

	// The same through a hook command that execs custody: the agent is
	// then custody's parent.
	_, path = clitest.NewTree(t, r, "exec")
	gone("a hook command that execs custody", path, run(path, "s-exec", "exec "+remove, ""))

	// Deeper in the tree: the agent and its shell stand in a directory
	// below the tree's top.
	_, path = clitest.NewTree(t, r, "deep")
	r.Commit(path, "sub/dir/f.txt", "published\n")
	r.Push(path, "main")
	gone("an agent in a directory of the tree", path,
		ccHook(t, r, filepath.Join(path, "sub", "dir"), remove, ccPayload(t, r, "WorktreeRemove", "s-deep", filepath.Join(path, "sub", "dir"), path), ""))

	// Unpushed work: kept, exit 3, the commit still there.
	id, path = clitest.NewTree(t, r, "unpushed")
	head := r.Commit(path, "wip.txt", "only here\n")
	kept("an unpushed commit", id, path, run(path, "s-unpushed", remove, ""), machine.CodeUnpushedCommits)
	if got := r.Head(path); got != head {
		t.Errorf("the unpushed tree's HEAD is %s, want %s", got, head)
	}
	// The next session in it takes a lease, as before the hook.
	ss := ccHook(t, r, path, ccCommand(t, "SessionStart"), ccPayload(t, r, "SessionStart", "s-next", path, path), "")
	if ss.Code != 0 || ss.Stderr != "" {
		t.Errorf("session-start in the kept tree: exit %d, stderr %q", ss.Code, ss.Stderr)
	}
	if l := hkLeases(t, r)[id]; l == nil || l.Holder != "s-next" {
		t.Errorf("the next session holds no lease on the kept tree: %+v", l)
	}

	// A process of its own in the tree, not the agent's chain: kept.
	id, path = clitest.NewTree(t, r, "server")
	r.Hold(path, "sleep", "600")
	kept("a foreign live process", id, path, run(path, "s-server", remove, ""), machine.CodeInUse)

	// The agent holding a file open in the tree: its open files still
	// count, only where it stands does not.
	id, path = clitest.NewTree(t, r, "open")
	kept("the agent's own open file", id, path, run(path, "s-open", remove, `exec 3<"$1/README"`), machine.CodeInUse)

	// A live lease of another session: kept.
	id, path = clitest.NewTree(t, r, "leased")
	ss = ccHook(t, r, path, ccCommand(t, "SessionStart"), ccPayload(t, r, "SessionStart", "s-other", path, path), "")
	if ss.Code != 0 {
		t.Fatalf("session-start: exit %d\n%s", ss.Code, ss.Stderr)
	}
	kept("another session's live lease", id, path, run(path, "s-mine", remove, ""), machine.CodeLeaseLive)

	// Nothing at the path: the tree is gone already.
	missing := filepath.Join(r.Dir, ".worktrees", "never-made")
	res := ccHook(t, r, r.Dir, remove, ccPayload(t, r, "WorktreeRemove", "s-gone", r.Dir, missing), "")
	if res.Code != 0 || res.Stderr != "" {
		t.Errorf("a tree already gone: exit %d, stderr %q; want 0", res.Code, res.Stderr)
	}

	// A directory custody keeps no tree of (the main checkout): refused.
	res = ccHook(t, r, r.Dir, remove, ccPayload(t, r, "WorktreeRemove", "s-main", r.Dir, r.Dir), "")
	if res.Code != 3 {
		t.Errorf("the main checkout: exit %d, want 3", res.Code)
	}
	ccOneLine(t, "the main checkout", res.Stderr, "[not-in-worktree]")
	if _, err := os.Lstat(filepath.Join(r.Dir, "README")); err != nil {
		t.Errorf("the main checkout lost its README: %v", err)
	}
}

// TestClaudeSessionEndUnderAHeldLock: while another custody holds the
// state file for 10s, session-end run as Claude Code runs it gives up on
// the lock after a second and exits 0 with one line, long before the
// holder lets go: Claude Code kills a SessionEnd hook after 1.5s.
func TestClaudeSessionEndUnderAHeldLock(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{})
	clitest.MustCustody(t, r, 0, "init")
	_, path := clitest.NewTree(t, r, "agent")
	if ss := ccHook(t, r, path, ccCommand(t, "SessionStart"), ccPayload(t, r, "SessionStart", "s1", path, path), ""); ss.Code != 0 {
		t.Fatalf("session-start: exit %d\n%s", ss.Code, ss.Stderr)
	}
	release := clitest.HoldLock(t, filepath.Join(r.Dir, ".git", "custody", "state.db"))
	held := time.Now()
	timer := time.AfterFunc(10*time.Second, release)
	defer timer.Stop()
	for _, ev := range []struct{ event, hook string }{{"SessionEnd", "session-end"}, {"PostToolUse", "heartbeat"}} {
		res := ccHook(t, r, path, ccCommand(t, ev.event), ccPayload(t, r, ev.event, "s1", path, path), "")
		if res.Code != 0 {
			t.Errorf("%s under a held lock: exit %d, want 0\n%s", ev.hook, res.Code, res.Stderr)
		}
		ccOneLine(t, ev.hook+" under a held lock", res.Stderr, "custody hook "+ev.hook, "1s")
		if waited := time.Since(held); waited >= 10*time.Second {
			t.Errorf("%s returned only after the holder let go (%s)", ev.hook, waited)
		}
	}
}

// TestClaudeHooksOnPayloadsTheyCannotUse: payloads that are huge, binary,
// or name paths outside the repository leave everything as it was; the
// lease hooks exit 0 with one line on stderr, worktree-remove exits
// non-zero with one line, and the tree stays.
func TestClaudeHooksOnPayloadsTheyCannotUse(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{})
	clitest.MustCustody(t, r, 0, "init")
	id, path := clitest.NewTree(t, r, "agent")
	outside := t.TempDir()
	huge := append([]byte(`{"session_id":"s1","cwd":"`+path+`","pad":"`), bytes.Repeat([]byte("x"), 2<<20)...)
	huge = append(huge, `"}`...)
	binary := []byte("\x00\xff\xfe{\"session_id\":\x00\x80\"s1\"}\x1b[2J")
	cases := []struct {
		name    string
		payload func(event string) []byte
	}{
		{"huge", func(string) []byte { return huge }},
		{"binary", func(string) []byte { return binary }},
		{"outside the repository", func(event string) []byte { return ccPayload(t, r, event, "s1", outside, outside) }},
		{"the filesystem root", func(event string) []byte { return ccPayload(t, r, event, "s1", "/", "/") }},
	}
	before := clitest.MustCustody(t, r, 0, "list", "--json").Stdout
	for _, c := range cases {
		for _, ev := range []string{"SessionStart", "PostToolUse", "SessionEnd"} {
			res := ccHook(t, r, path, ccCommand(t, ev), c.payload(ev), "")
			if res.Code != 0 {
				t.Errorf("%s payload, %s: exit %d, want 0\n%s", c.name, ev, res.Code, res.Stderr)
			}
			ccOneLine(t, c.name+" payload, "+ev, res.Stderr, "custody hook ")
		}
		res := ccHook(t, r, path, ccCommand(t, "WorktreeRemove"), c.payload("WorktreeRemove"), "")
		if res.Code == 0 {
			t.Errorf("%s payload, WorktreeRemove: exit 0, want non-zero", c.name)
		}
		ccOneLine(t, c.name+" payload, WorktreeRemove", res.Stderr, "custody hook worktree-remove")
		if _, err := os.Lstat(filepath.Join(path, ".git")); err != nil {
			t.Fatalf("%s payload: the tree is gone: %v", c.name, err)
		}
	}
	if after := clitest.MustCustody(t, r, 0, "list", "--json").Stdout; after != before {
		t.Errorf("the records changed:\nbefore %s\nafter  %s", before, after)
	}
	if l := hkLeases(t, r)[id]; l != nil {
		t.Errorf("a lease was taken: %+v", l)
	}
}
