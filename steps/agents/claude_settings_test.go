package agents

// The merge of custody's hooks into Claude Code's settings, as a pure
// function over bytes. Helpers are prefixed ic.

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/fixtures"
)

// TestIntegrateClaudeMerge: the merge as a pure function.
func TestIntegrateClaudeMerge(t *testing.T) {
	t.Parallel()
	hooks := ClaudeHooks()
	fresh, err := mergeClaudeSettings(nil, hooks)
	if err != nil {
		t.Fatal(err)
	}
	merged, err := mergeClaudeSettings([]byte(fixtures.ClaudeUserSettings), hooks)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"fresh": fresh, "merged": merged} {
		again, err := mergeClaudeSettings(b, hooks)
		if err != nil || string(again) != string(b) {
			t.Errorf("%s: merging again changed the bytes (err %v):\n%s\nthen\n%s", name, err, b, again)
		}
	}
	var before, after map[string]any
	if err := json.Unmarshal([]byte(fixtures.ClaudeUserSettings), &before); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(merged, &after); err != nil {
		t.Fatal(err)
	}
	// Every member but hooks, and every user group, is as it was.
	for k, v := range before {
		if k == "hooks" {
			continue
		}
		if diff := cmp.Diff(v, after[k]); diff != "" {
			t.Errorf("member %s changed (-before +after):\n%s", k, diff)
		}
	}
	bh, ah := before["hooks"].(map[string]any), after["hooks"].(map[string]any)
	if diff := cmp.Diff(bh["PreToolUse"], ah["PreToolUse"]); diff != "" {
		t.Errorf("the user's PreToolUse hooks changed:\n%s", diff)
	}
	ss := ah["SessionStart"].([]any)
	if len(ss) != 2 || cmp.Diff(bh["SessionStart"].([]any)[0], ss[0]) != "" {
		t.Errorf("SessionStart: %v, want the user's group first and unchanged, then custody's", ss)
	}
	if n := ah["Notification"].([]any); len(n) != 0 {
		t.Errorf("Notification still holds custody's stale group: %v", n)
	}
	// The user's string keeps its own escape; custody's > is not escaped.
	if !strings.Contains(string(merged), `test \"a\u003cb\"`) || strings.Contains(string(merged), `\u003e`) {
		t.Errorf("a command's text was re-escaped:\n%s", merged)
	}
	keys := icTopKeys(t, merged)
	if diff := cmp.Diff([]string{"permissions", "hooks", "model", "env"}, keys); diff != "" {
		t.Errorf("the members' order changed (-want +got):\n%s", diff)
	}
	for _, bad := range []string{`[1]`, `{"hooks": []}`, `{"hooks": {"Stop": {}}}`, `{"hooks": {"Stop": [7]}}`, `{"a": 1`, `{} {}`} {
		if _, err := mergeClaudeSettings([]byte(bad), hooks); err == nil {
			t.Errorf("mergeClaudeSettings(%s) merged it", bad)
		}
	}
}

// icTopKeys returns the top-level member names of b, in order.
func icTopKeys(t *testing.T, b []byte) []string {
	t.Helper()
	o, err := parseObject(b)
	if err != nil {
		t.Fatal(err)
	}
	return o.keys
}

// TestClaudeHooksFitTheClientsLimits: the written entries run the
// heartbeats in the background (no prompt or tool call waits on custody),
// give SessionEnd room beyond Claude Code's default 1.5s and WorktreeRemove
// room for one plan and apply; settings custody wrote before, without
// them, are rewritten to carry them.
func TestClaudeHooksFitTheClientsLimits(t *testing.T) {
	t.Parallel()
	type hook struct {
		Type    string `json:"type"`
		Command string `json:"command"`
		Timeout int    `json:"timeout"`
		Async   bool   `json:"async"`
	}
	read := func(b []byte) map[string]hook {
		t.Helper()
		var s struct {
			Hooks map[string][]struct {
				Hooks []hook `json:"hooks"`
			} `json:"hooks"`
		}
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		out := map[string]hook{}
		for ev, groups := range s.Hooks {
			for _, g := range groups {
				for _, h := range g.Hooks {
					if ownedCommand(h.Command) {
						out[ev] = h
					}
				}
			}
		}
		return out
	}
	older := []byte(`{"hooks":{"PostToolUse":[{"hooks":[{"type":"command","command":"custody hook heartbeat --agent claude >/dev/null"}]}],` +
		`"SessionEnd":[{"hooks":[{"type":"command","command":"custody hook session-end --agent claude >/dev/null"}]}]}}`)
	for name, existing := range map[string][]byte{"new": nil, "written by an older custody": older} {
		b, err := mergeClaudeSettings(existing, ClaudeHooks())
		if err != nil {
			t.Fatal(err)
		}
		got := read(b)
		for _, ev := range []string{"UserPromptSubmit", "PostToolUse", "Stop"} {
			if !got[ev].Async || got[ev].Timeout != 0 {
				t.Errorf("%s: %s runs %+v, want async", name, ev, got[ev])
			}
		}
		if h := got["SessionEnd"]; h.Async || h.Timeout <= 1 || h.Timeout > 60 {
			t.Errorf("%s: SessionEnd runs %+v, want a timeout above Claude Code's 1.5s and at most its 60s", name, h)
		}
		if h := got["WorktreeRemove"]; h.Async || h.Timeout < 60 {
			t.Errorf("%s: WorktreeRemove runs %+v, want synchronous with room for a plan and an apply", name, h)
		}
		for _, ev := range []string{"SessionStart", "WorktreeCreate"} {
			if h := got[ev]; h.Async || h.Command == "" {
				t.Errorf("%s: %s runs %+v, want synchronous", name, ev, h)
			}
		}
		if again, err := mergeClaudeSettings(b, ClaudeHooks()); err != nil || string(again) != string(b) {
			t.Errorf("%s: merging again changes the file (%v)", name, err)
		}
	}
}
