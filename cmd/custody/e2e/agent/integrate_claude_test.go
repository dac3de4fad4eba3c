package agent

// custody integrate claude from the command line: the commands it writes
// work when Claude Code runs them (sh -c, the payload on stdin). The merge
// itself is tested in steps. Helpers are prefixed ic.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
)

// icSettings reads the merged file's hooks: event → every command.
func icSettings(t *testing.T, path string) map[string][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for ev, groups := range s.Hooks {
		for _, g := range groups {
			for _, h := range g.Hooks {
				out[ev] = append(out[ev], h.Command)
			}
		}
	}
	return out
}

// icRunEvent runs every command the settings give event, as Claude Code
// does: sh -c in the project directory, the payload on stdin, custody on
// PATH. It returns the last command's result; each must exit 0.
func icRunEvent(t *testing.T, r *fixtures.Repo, cmds map[string][]string, event string, payload map[string]string) clitest.Result {
	t.Helper()
	return icRunEventExit(t, r, cmds, event, payload, 0)
}

// icRunEventExit is icRunEvent for hooks that must exit with want.
func icRunEventExit(t *testing.T, r *fixtures.Repo, cmds map[string][]string, event string, payload map[string]string, want int) clitest.Result {
	t.Helper()
	if len(cmds[event]) == 0 {
		t.Fatalf("the settings run nothing on %s", event)
	}
	payload["hook_event_name"] = event
	if payload["session_id"] == "" {
		payload["session_id"] = "claude-session-1"
	}
	payload["transcript_path"] = "/no-home/.claude/projects/x/claude-session-1.jsonl"
	b, _ := json.Marshal(payload)
	var res clitest.Result
	for _, c := range cmds[event] {
		res = hkRun(t, "sh", r, r.Dir, string(b), []string{clitest.PathEnv(filepath.Dir(clitest.Bin())), "CLAUDE_PROJECT_DIR=" + r.Dir}, "-c", c)
		if res.Code != want {
			t.Fatalf("%s hook %q: exit %d, want %d\n%s", event, c, res.Code, want, res)
		}
	}
	return res
}

// TestIntegrateClaude: integrate writes the hooks into a person's settings
// (theirs kept), is idempotent and writes nothing the second time, --check
// agrees, and the written commands, run as Claude Code runs them with the
// payloads it sends, create a tree, lease it to the session, renew and
// release the lease, and retire it: removed when provably safe, kept and
// finished otherwise.
func TestIntegrateClaude(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	settings := filepath.Join(r.Dir, ".claude", "settings.json")
	r.WriteFile(filepath.Join(r.Dir, ".claude"), "settings.json", fixtures.ClaudeUserSettings)
	res := clitest.MustCustody(t, r, 0, "integrate", "claude", "--json")
	if !strings.Contains(res.Stdout, `"written": true`) {
		t.Fatalf("integrate claude wrote nothing:\n%s", res)
	}
	first, _ := os.ReadFile(settings)
	st1, _ := os.Stat(settings)
	res = clitest.MustCustody(t, r, 0, "integrate", "claude", "--json")
	if !strings.Contains(res.Stdout, `"written": false`) {
		t.Errorf("integrate claude again wrote the file:\n%s", res)
	}
	second, _ := os.ReadFile(settings)
	st2, _ := os.Stat(settings)
	if string(first) != string(second) || !os.SameFile(st1, st2) || !st1.ModTime().Equal(st2.ModTime()) {
		t.Errorf("integrate claude again touched the file")
	}
	clitest.MustCustody(t, r, 0, "integrate", "claude", "--check")
	cmds := icSettings(t, settings)
	if !strings.Contains(strings.Join(cmds["SessionStart"], "\n"), `echo started >> "$CLAUDE_PROJECT_DIR/.hooklog"`) ||
		len(cmds["PreToolUse"]) != 1 || cmds["PreToolUse"][0] != "./scripts/guard.sh" {
		t.Fatalf("the user's hooks did not survive integrate: %v", cmds)
	}
	delete(cmds, "PreToolUse") // the user's guard script is not in this fixture

	// WorktreeCreate: custody new, its path on stdout and nothing else.
	res = icRunEvent(t, r, cmds, "WorktreeCreate", map[string]string{"cwd": r.Dir, "name": "login fix"})
	path := strings.TrimSpace(res.Stdout)
	if !filepath.IsAbs(path) || strings.Count(res.Stdout, "\n") != 1 {
		t.Fatalf("WorktreeCreate printed %q, want one absolute path", res.Stdout)
	}
	id := filepath.Base(path)
	if !strings.HasPrefix(id, "login-fix-") || clitest.RecordState(t, r, id) != "active" {
		t.Fatalf("WorktreeCreate made %s (%s), want an active login-fix-* tree", id, clitest.RecordState(t, r, id))
	}
	if l := hkLeases(t, r)[id]; l == nil || l.Holder != "claude-session-1" {
		t.Fatalf("the new tree's lease: %+v, want the creating session's", l)
	}
	// A session in it: start (the user's hook runs too), prompts and tool
	// calls, the end.
	in := map[string]string{"cwd": path}
	if res = icRunEvent(t, r, cmds, "SessionStart", in); res.Stdout != "" {
		t.Errorf("SessionStart printed %q: what it prints reaches the model", res.Stdout)
	}
	if b, _ := os.ReadFile(filepath.Join(r.Dir, ".hooklog")); string(b) != "started\n" {
		t.Errorf("the user's SessionStart hook did not run: .hooklog holds %q", b)
	}
	for _, ev := range []string{"UserPromptSubmit", "PostToolUse", "Stop"} {
		icRunEvent(t, r, cmds, ev, map[string]string{"cwd": path, "prompt": "go on", "tool_name": "Bash"})
	}
	if l := hkLeases(t, r)[id]; l == nil || l.Holder != "claude-session-1" {
		t.Fatalf("the lease during the session: %+v", l)
	}
	it, _ := hkPlanItem(t, r, time.Time{}, id)
	if it.Action != machine.ActionKeep || !clitest.HasCode(it.Refusals, "lease-live") {
		t.Errorf("plan during the session: %s %v, want keep [lease-live]", it.Action, clitest.RefusalCodes(it.Refusals))
	}
	icRunEvent(t, r, cmds, "SessionEnd", map[string]string{"cwd": path, "reason": "exit"})
	if l := hkLeases(t, r)[id]; l != nil {
		t.Fatalf("the lease after SessionEnd: %+v, want none", l)
	}
	// WorktreeRemove of a clean, published tree removes it.
	icRunEvent(t, r, cmds, "WorktreeRemove", map[string]string{"cwd": r.Dir, "worktree_path": path})
	clitest.AssertRemoved(t, r, id, path, true)

	// WorktreeRemove of a tree holding unsaved work keeps it, active again
	// as it was, and exits 3: Claude Code then says it could not remove it.
	res = icRunEvent(t, r, cmds, "WorktreeCreate", map[string]string{"cwd": r.Dir, "name": "notes", "session_id": "claude-session-2"})
	kept := strings.TrimSpace(res.Stdout)
	r.WriteFile(kept, "notes.txt", "only here\n")
	icRunEventExit(t, r, cmds, "WorktreeRemove", map[string]string{"cwd": r.Dir, "worktree_path": kept, "session_id": "claude-session-2"}, 3)
	if b, err := os.ReadFile(filepath.Join(kept, "notes.txt")); err != nil || string(b) != "only here\n" {
		t.Fatalf("WorktreeRemove lost the unsaved notes: %q %v", b, err)
	}
	if s := clitest.RecordState(t, r, filepath.Base(kept)); s != "active" {
		t.Errorf("the kept tree is %s, want active again (a later session leases it)", s)
	}
	// The hook's envelope names why, when it is not sent to /dev/null.
	pl, _ := json.Marshal(map[string]string{"worktree_path": kept, "cwd": r.Dir})
	res = hkRun(t, clitest.Bin(), r, r.Dir, string(pl), nil, "hook", "worktree-remove")
	clitest.ValidateSchema(t, "hook-envelope.json", "custody hook worktree-remove", []byte(res.Stdout))
	var env hkEnvelope
	if err := json.Unmarshal([]byte(res.Stdout), &env); err != nil || res.Code != 3 || env.Outcome != "kept" || env.Refusal == nil || env.Refusal.Code != machine.CodeUntrackedFiles {
		t.Errorf("worktree-remove of the kept tree: %+v, want kept [untracked-files]\n%s", env, res)
	}
}

// TestIntegrateClaudeRefusals: a file integrate cannot merge is refused
// and left byte for byte; --check on a stale file exits 3 and writes
// nothing.
func TestIntegrateClaudeRefusals(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	dir := filepath.Join(r.Dir, ".claude")
	settings := filepath.Join(dir, "settings.json")
	res := clitest.Custody(t, r, "integrate", "claude", "--check", "--json")
	if res.Code != 3 || !strings.Contains(res.Stdout, `"claude-settings-stale"`) {
		t.Errorf("--check without a file: want exit 3 [claude-settings-stale]\n%s", res)
	}
	if _, err := os.Lstat(settings); !os.IsNotExist(err) {
		t.Errorf("--check wrote %s (%v)", settings, err)
	}
	for _, bad := range []string{"{\"hooks\": ", "[]\n", "{\"hooks\": {\"Stop\": \"custody\"}}\n"} {
		r.WriteFile(dir, "settings.json", bad)
		res := clitest.Custody(t, r, "integrate", "claude", "--json")
		if res.Code != 1 || !strings.Contains(res.Stderr, `"claude-settings-invalid"`) {
			t.Errorf("integrate over %q: want exit 1 [claude-settings-invalid]\n%s", bad, res)
		}
		if b, _ := os.ReadFile(settings); string(b) != bad {
			t.Errorf("integrate over %q left %q", bad, b)
		}
	}
	if err := os.Remove(settings); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(r.Root, "elsewhere.json"), settings); err != nil {
		t.Fatal(err)
	}
	if res := clitest.Custody(t, r, "integrate", "claude"); res.Code != 1 || !strings.Contains(res.Stderr, "[claude-settings-invalid]") {
		t.Errorf("integrate over a symlink: want exit 1 [claude-settings-invalid]\n%s", res)
	}
	if _, err := os.Lstat(filepath.Join(r.Root, "elsewhere.json")); !os.IsNotExist(err) {
		t.Errorf("integrate wrote through the symlink")
	}
	if out, err := exec.Command("git", "-C", r.Dir, "status", "--porcelain").Output(); err != nil || strings.Contains(string(out), "settings.json.custody") {
		t.Errorf("a temporary file was left: %s %v", out, err)
	}
}
