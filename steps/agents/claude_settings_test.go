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
