//go:build unix

package agents

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
)

// TestIntegrateClaude: check of a missing file is stale and writes
// nothing; the merge writes a person's file with custody's hooks, keeping
// its mode, and a second run (and check) finds it current and does not
// touch it; a file that cannot be merged, or a symlink, is refused with
// claude-settings-invalid and left as it is.
func TestIntegrateClaude(t *testing.T) {
	t.Parallel()
	repo := hostio.Repo{MainCheckout: t.TempDir()}
	path := filepath.Join(repo.MainCheckout, ".claude", "settings.json")
	res, err := IntegrateClaude(repo, true)
	if err != nil || res.Refusal == nil || res.Refusal.Code != machine.CodeClaudeSettingsStale || !res.Pending() || res.Written {
		t.Errorf("check without a file: %+v %v, want a stale refusal, nothing written", res, err)
	}
	if _, err := os.Lstat(filepath.Dir(path)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("check made %s (%v)", filepath.Dir(path), err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(fixtures.ClaudeUserSettings), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err = IntegrateClaude(repo, false)
	if err != nil || !res.Written || !res.Changed || res.Pending() || res.Path != path || len(res.Hooks) != len(ClaudeHooks()) {
		t.Fatalf("integrate: %+v %v, want written", res, err)
	}
	want, err := mergeClaudeSettings([]byte(fixtures.ClaudeUserSettings), ClaudeHooks())
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != string(want) {
		t.Errorf("the file holds\n%s\nwant the merge\n%s", b, want)
	}
	st1, err := os.Stat(path)
	if err != nil || st1.Mode().Perm() != 0o600 {
		t.Errorf("the file's mode is %v (%v), want 0600 kept", st1.Mode(), err)
	}
	for _, check := range []bool{false, true} {
		res, err = IntegrateClaude(repo, check)
		if err != nil || res.Written || res.Changed || res.Pending() {
			t.Errorf("again (check %v): %+v %v, want current, nothing written", check, res, err)
		}
	}
	if st2, err := os.Stat(path); err != nil || !os.SameFile(st1, st2) || !st1.ModTime().Equal(st2.ModTime()) {
		t.Errorf("a run that found the file current touched it")
	}
	for _, bad := range []string{"{\"hooks\": ", "[]\n", "{\"hooks\": {\"Stop\": \"custody\"}}\n"} {
		if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := IntegrateClaude(repo, false)
		var r *machine.Refusal
		if !errors.As(err, &r) || r.Code != machine.CodeClaudeSettingsInvalid || r.Path != path {
			t.Errorf("integrate over %q: %v, want claude-settings-invalid", bad, err)
		}
		if b, _ := os.ReadFile(path); string(b) != bad {
			t.Errorf("integrate over %q left %q", bad, b)
		}
	}
	elsewhere := filepath.Join(t.TempDir(), "elsewhere.json")
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, path); err != nil {
		t.Fatal(err)
	}
	_, err = IntegrateClaude(repo, false)
	var r *machine.Refusal
	if !errors.As(err, &r) || r.Code != machine.CodeClaudeSettingsInvalid {
		t.Errorf("integrate over a symlink: %v, want claude-settings-invalid", err)
	}
	if _, err := os.Lstat(elsewhere); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("integrate wrote through the symlink")
	}
}
