package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-sh/custody/fixtures"
)

// codeOf runs custody with --json, requires exit 1 with nothing on stdout,
// and returns the error envelope's code and message.
func codeOf(t *testing.T, r *fixtures.Repo, args ...string) (string, string) {
	t.Helper()
	res := custody(t, r, append([]string{"--json"}, args...)...)
	if res.Code != 1 || res.Stdout != "" {
		t.Fatalf("custody %s: want exit 1 and no stdout, got\n%s", strings.Join(args, " "), res)
	}
	body := decodeError(t, res)
	return body.Code, body.Message
}

// TestCodesCommandErrors: each command-level error has its own code, names
// the thing, and changes nothing.
func TestCodesCommandErrors(t *testing.T) {
	t.Parallel()
	t.Run("not-initialized", func(t *testing.T) {
		t.Parallel()
		r := fixtures.New(t, fixtures.Options{})
		for _, cmd := range [][]string{{"plan"}, {"list"}, {"journal", "head"}, {"doctor"}} {
			if code, _ := codeOf(t, r, cmd...); code != "not-initialized" {
				t.Errorf("%v in a repository custody never ran in: code %s, want not-initialized", cmd, code)
			}
		}
		if _, err := os.Lstat(filepath.Join(r.Dir, ".git", "custody", "state.db")); !os.IsNotExist(err) {
			t.Errorf("a read-only command created the state file: %v", err)
		}
	})
	t.Run("config-invalid", func(t *testing.T) {
		t.Parallel()
		r := fixtures.New(t, fixtures.Options{})
		mustCustody(t, r, 0, "init")
		r.WriteFile(r.Dir, "custody.toml", "[worktree]\nbranch_prefx = \"x/\"\n")
		before := r.Snap(filepath.Join(r.Dir, ".git", "custody"))
		code, msg := codeOf(t, r, "new", "x")
		if code != "config-invalid" || !strings.Contains(msg, "custody.toml") || !strings.Contains(msg, "line 2") || !strings.Contains(msg, "branch_prefx") {
			t.Errorf("code %s, message %q: want config-invalid naming the file, line 2 and the key", code, msg)
		}
		if d := before.Diff(r.Snap(filepath.Join(r.Dir, ".git", "custody"))); d != "" {
			t.Errorf("a refused command changed the state directory:\n%s", d)
		}
	})
	t.Run("journal-broken", func(t *testing.T) {
		t.Parallel()
		r := fixtures.New(t, fixtures.Options{})
		mustCustody(t, r, 0, "init")
		newTree(t, r, "a")
		mustCustody(t, r, 0, "journal", "export", "-o", "j.jsonl")
		mustCustody(t, r, 0, "journal", "verify", "j.jsonl")
		rtEditExport(t, filepath.Join(r.Dir, "j.jsonl"))
		if code, msg := codeOf(t, r, "journal", "verify", "j.jsonl"); code != "journal-broken" || !strings.Contains(msg, "seq 2") {
			t.Errorf("code %s, message %q: want journal-broken naming seq 2", code, msg)
		}
	})
	t.Run("state-unreadable", func(t *testing.T) {
		t.Parallel()
		r := fixtures.New(t, fixtures.Options{})
		mustCustody(t, r, 0, "init")
		state := filepath.Join(r.Dir, ".git", "custody", "state.db")
		if err := os.Remove(state); err != nil {
			t.Fatal(err)
		}
		// A state file that exists (a link) but cannot be opened: not
		// corrupt, so custody must not advise moving it aside.
		if err := os.Symlink(filepath.Join(r.Root, "no-such-dir", "state.db"), state); err != nil {
			t.Fatal(err)
		}
		code, msg := codeOf(t, r, "list")
		if code != "state-unreadable" || !strings.Contains(msg, "state.db") {
			t.Errorf("code %s, message %q: want state-unreadable naming state.db", code, msg)
		}
		if _, err := os.Lstat(filepath.Join(r.Root, "no-such-dir")); !os.IsNotExist(err) {
			t.Errorf("custody created the link's target directory: %v", err)
		}
	})
}

// TestDoctorReportsBrokenConfig: doctor checks custody.toml and reports a
// broken one as a problem naming the file, line and key (exit 3), where
// every other command refuses with config-invalid.
func TestDoctorReportsBrokenConfig(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{})
	mustCustody(t, r, 0, "init")
	mustCustody(t, r, 0, "doctor")
	r.WriteFile(r.Dir, "custody.toml", "[resources.db]\ncreate = \"x\"\ndestroy = \"y\"\nretries = \"two\"\n")
	res := mustCustody(t, r, 3, "doctor")
	if !strings.Contains(res.Stdout, "custody.toml") || !strings.Contains(res.Stdout, "line 4") || !strings.Contains(res.Stdout, "retries") {
		t.Errorf("doctor does not name the file, line and key:\n%s", res)
	}
	if code, _ := codeOf(t, r, "list"); code != "config-invalid" {
		t.Errorf("list with a broken custody.toml: code %s, want config-invalid", code)
	}
}

// TestFinishOutsideAWorktree: finish with no id outside every managed
// worktree names the directory and asks for an id.
func TestFinishOutsideAWorktree(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{})
	mustCustody(t, r, 0, "init")
	newTree(t, r, "a")
	code, msg := codeOf(t, r, "finish")
	if code != "not-in-worktree" || !strings.Contains(msg, r.Dir) {
		t.Errorf("finish in the main checkout: code %s, message %q; want not-in-worktree naming %s", code, msg, r.Dir)
	}
}
