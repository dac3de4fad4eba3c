//go:build unix

package main

// Every refusal printed by any command carries its retry line (DESIGN §1
// principle 7, STYLE 5-6): TestRetryEveryCommand provokes at least one
// refusal or error of every command in the kong CLI and checks, in the
// human output and with --json, the exit code (docs/exit-codes.md), the
// refusal's code, and that every refusal names a command a person can paste
// as it is. A command added to CLI without a case here, or without a
// e2e/scripts/<feature>/testdata/script/<command>_refused_<case>.txtar, fails TestRetryCoversEveryCommand.
// Helpers are prefixed rt so they cannot collide with the other test files.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kong"
	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/store"
	bolt "go.etcd.io/bbolt"
)

// rtCase provokes one refusal of one command.
type rtCase struct {
	// cmd is the command path, its words as kong names them ("journal verify").
	cmd string
	// name is the case; the script covering the human form is
	// e2e/scripts/<feature>/testdata/script/<cmd words joined by _>_refused_<name>.txtar when
	// there is one.
	name string
	// setup makes the world the refusal needs and returns the repository,
	// the directory custody runs in ("" for the main checkout) and the
	// arguments after the command words. It runs once; the human and the
	// --json run share its world, so the refusal must change nothing.
	setup func(t *testing.T) (r *fixtures.Repo, dir string, args []string)
	exit  int    // the exit code, as docs/exit-codes.md gives it
	code  string // a refusal with this code must be printed
	// doctor, when set, says why `custody doctor` is the helpful retry
	// of this refusal (it is otherwise only retryOf's last resort).
	doctor string
	// placeholder, when set, says why the retry holds a value only the
	// person can choose (a new file's name).
	placeholder string
	// pasted, when set, checks the world after the retry of the refusal
	// with code was pasted into a shell as it is (sh -c, in the same
	// directory, custody first on PATH); it gets the refusal's path and
	// what the shell printed and exited with.
	pasted func(t *testing.T, r *fixtures.Repo, path string, sh clitest.Result)
}

// rtBare makes a repository custody never ran in.
func rtBare(t *testing.T) *fixtures.Repo {
	t.Helper()
	return fixtures.New(t, fixtures.Options{Name: clitest.SpacedRepoName})
}

// rtUnsafeRoot makes a repository whose custody.toml puts the managed root
// under a symlink, which every command refuses.
func rtUnsafeRoot(t *testing.T) *fixtures.Repo {
	t.Helper()
	r := rtBare(t)
	if err := os.MkdirAll(filepath.Join(r.Root, "elsewhere"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(r.Root, "elsewhere"), filepath.Join(r.Dir, "link")); err != nil {
		t.Fatal(err)
	}
	r.WriteFile(r.Dir, "custody.toml", "[worktree]\nroot = \"link/trees\"\n")
	return r
}

// rtResources makes a repository declaring resource db with the given
// commands (shell), custody initialized.
func rtResources(t *testing.T, create, destroy, ensure string) *fixtures.Repo {
	t.Helper()
	r := rtBare(t)
	clitest.WriteTrusted(t, r, "[resources.db]\ncreate = '''"+create+"'''\ndestroy = '''"+destroy+"'''\nensure = '''"+ensure+"'''\n")
	clitest.MustCustody(t, r, 0, "init")
	return r
}

// rtKept makes a finished tree holding an untracked file.
func rtKept(t *testing.T, r *fixtures.Repo) (id, path string) {
	t.Helper()
	id, path = clitest.NewTree(t, r, "kept")
	r.WriteFile(path, "notes.txt", "only here\n")
	clitest.MustCustody(t, r, 0, "finish", id)
	return id, path
}

// rtLost makes a finished tree, deleted by hand and pruned, whose last
// commit git no longer has: its branch deleted, its reflogs expired, the
// object pruned.
func rtLost(t *testing.T, r *fixtures.Repo) (id, commit string) {
	t.Helper()
	id, path := clitest.NewTree(t, r, "lost")
	commit = r.Commit(path, "mine.txt", "work that will be lost\n")
	clitest.MustCustody(t, r, 0, "finish", id)
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	r.Git("worktree", "prune")
	r.Git("branch", "-q", "-D", "custody/"+id)
	r.Git("reflog", "expire", "--expire=now", "--all")
	r.Git("gc", "-q", "--prune=now")
	return id, commit
}

// rtTombstoned checks, after a pasted retry, that it succeeded and the
// record whose tree was at path is tombstoned.
func rtTombstoned(t *testing.T, r *fixtures.Repo, path string, sh clitest.Result) {
	t.Helper()
	if sh.Code != 0 {
		t.Fatalf("the pasted retry failed:\n%s", sh)
	}
	if st := clitest.RecordState(t, r, filepath.Base(path)); st != "tombstoned" {
		t.Errorf("after the pasted retry the record is %s, want tombstoned\n%s", st, sh)
	}
}

// rtEditExport edits the first created entry of the journal export at
// path, so it no longer verifies (its seq 2 was changed).
func rtEditExport(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(b), `"to":"active"`, `"to":"finished"`, 1)
	if edited == string(b) {
		t.Fatal("the export has no created entry to edit")
	}
	if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
}

func rtCases() []rtCase {
	at := func(r *fixtures.Repo, args ...string) (*fixtures.Repo, string, []string) { return r, "", args }
	// initialized runs the command with args in a repository custody was
	// initialized in; uninitialized, in one custody never ran in.
	initialized := func(args ...string) func(t *testing.T) (*fixtures.Repo, string, []string) {
		return func(t *testing.T) (*fixtures.Repo, string, []string) {
			return at(clitest.InitSpacedRepo(t, fixtures.Options{}), args...)
		}
	}
	uninitialized := func(t *testing.T) (*fixtures.Repo, string, []string) { return at(rtBare(t)) }
	return []rtCase{
		{cmd: "init", name: "unsafe_root", exit: 1, code: "unsafe-target",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) { return at(rtUnsafeRoot(t)) }},
		{cmd: "init", name: "root_not_a_directory", exit: 1, code: "symlink",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := rtBare(t)
				r.WriteFile(r.Dir, ".worktrees", "a file where the managed root goes\n")
				return at(r)
			}},
		{cmd: "new", name: "unknown_revision", exit: 1, code: "unknown-revision",
			setup: initialized("fix", "--from", "no-such-rev")},
		{cmd: "new", name: "branch_invalid", exit: 1, code: "branch-invalid",
			setup: initialized("fix", "--branch", "a..b")},
		{cmd: "new", name: "branch_exists", exit: 1, code: "branch-exists",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := clitest.InitSpacedRepo(t, fixtures.Options{})
				r.Git("branch", "topic")
				return at(r, "my fix", "--branch", "topic")
			},
			pasted: func(t *testing.T, r *fixtures.Repo, _ string, sh clitest.Result) {
				if sh.Code != 0 || r.Git("-C", strings.TrimSpace(sh.Stdout), "symbolic-ref", "HEAD") != "refs/heads/topic" {
					t.Errorf("the retry did not make the tree on topic:\n%s", sh)
				}
			}},
		{cmd: "new", name: "branch_missing", exit: 1, code: "branch-missing",
			setup: initialized("fix", "--checkout", "no-such-branch")},
		{cmd: "new", name: "branch_checked_out", exit: 1, code: "branch-checked-out",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := clitest.InitSpacedRepo(t, fixtures.Options{})
				return at(r, "fix", "--checkout", "main")
			},
			pasted: func(t *testing.T, r *fixtures.Repo, _ string, sh clitest.Result) {
				if sh.Code != 0 || !strings.HasPrefix(r.Git("-C", strings.TrimSpace(sh.Stdout), "symbolic-ref", "HEAD"), "refs/heads/custody/fix-") {
					t.Errorf("the retry did not make a tree of custody's own:\n%s", sh)
				}
			}},
		{cmd: "new", name: "required_resource_failed", exit: 1, code: "create-failed",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				return at(rtResources(t, "exit 7", "true", "true"), "my fix")
			}},
		{cmd: "list", name: "not_initialized", exit: 1, code: "not-initialized",
			setup: uninitialized},
		{cmd: "sweep", name: "not_initialized", exit: 1, code: "not-initialized",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) { return at(rtBare(t), "--dry-run") }},
		{cmd: "recovered list", name: "not_initialized", exit: 1, code: "not-initialized",
			setup: uninitialized},
		{cmd: "recovered prune", name: "bad_age", exit: 1, code: "usage",
			setup: initialized("--older-than", "0s")},
		{cmd: "list", name: "unknown_flag", exit: 1, code: "usage",
			setup: initialized("--frobnicate")},
		{cmd: "show", name: "unknown_id", exit: 1, code: "unknown-record",
			setup: initialized("nosuch-123456")},
		{cmd: "show", name: "ambiguous", exit: 1, code: "ambiguous-reference",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := clitest.InitSpacedRepo(t, fixtures.Options{})
				clitest.NewTree(t, r, "fix one")
				clitest.NewTree(t, r, "fix two")
				return at(r, "fix-")
			}},
		{cmd: "path", name: "unknown_id", exit: 1, code: "unknown-record",
			setup: initialized("nosuch-123456")},
		{cmd: "switch", name: "tree_gone", exit: 1, code: "worktree-missing",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := clitest.InitSpacedRepo(t, fixtures.Options{})
				id, path := clitest.NewTree(t, r, "gone")
				if err := os.RemoveAll(path); err != nil {
					t.Fatal(err)
				}
				return at(r, id)
			}},
		{cmd: "shell-init", name: "unknown_shell", exit: 1, code: "usage",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) { return at(rtBare(t), "tcsh") }},
		{cmd: "__complete", name: "not_initialized", exit: 1, code: "not-initialized",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) { return at(rtBare(t), "trees") }},
		{cmd: "archive create", name: "unknown_id", exit: 1, code: "unknown-record",
			setup: initialized("nosuch-123456")},
		{cmd: "archive verify", name: "unknown_id", exit: 1, code: "unknown-record",
			setup: initialized("nosuch-123456")},
		{cmd: "archive list", name: "incomplete", exit: 3, code: "archive-incomplete", setup: arRetryIncomplete},
		{cmd: "archive restore", name: "target_not_empty", exit: 1, code: "unsafe-target", setup: arRetryTargetNotEmpty},
		{cmd: "archive prune", name: "unknown_name", exit: 3, code: "unknown-record",
			setup: initialized("--apply", "nosuch-123456")},
		{cmd: "show", name: "kept_tree", exit: 0, code: "untracked-files",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := clitest.InitSpacedRepo(t, fixtures.Options{})
				id, _ := rtKept(t, r)
				return at(r, id)
			}},
		{cmd: "show", name: "lost_tree", exit: 0, code: "worktree-missing",
			// The retry moves on (abandon, the commit named whole), not
			// back to show's own refusal.
			pasted: rtTombstoned,
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := clitest.InitSpacedRepo(t, fixtures.Options{})
				id, _ := rtLost(t, r)
				return at(r, id)
			}},
		{cmd: "abandon", name: "short_prefix", exit: 3, code: "ambiguous-reference",
			pasted: rtTombstoned,
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := clitest.InitSpacedRepo(t, fixtures.Options{})
				id, commit := rtLost(t, r)
				return at(r, id, "--acknowledge-unrecoverable", commit[:5])
			}},
		{cmd: "adopt", name: "not_a_worktree", exit: 1, code: "not-owned",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := clitest.InitSpacedRepo(t, fixtures.Options{})
				return at(r, r.Root)
			}},
		{cmd: "adopt", name: "already_managed", exit: 1, code: "wrong-state",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := clitest.InitSpacedRepo(t, fixtures.Options{})
				_, path := clitest.NewTree(t, r, "mine")
				return at(r, path)
			}},
		{cmd: "finish", name: "unknown_id", exit: 1, code: "unknown-record",
			setup: initialized("nosuch-123456")},
		{cmd: "finish", name: "outside_worktree", exit: 1, code: "not-in-worktree",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := clitest.InitSpacedRepo(t, fixtures.Options{})
				clitest.NewTree(t, r, "somewhere")
				return at(r)
			}},
		{cmd: "finish", name: "lease", exit: 3, code: "lease-live",
			pasted: func(t *testing.T, r *fixtures.Repo, path string, sh clitest.Result) {
				// The lease ended as its session's end would, and the tree
				// is finished: not the same refusal again.
				if sh.Code != 0 {
					t.Fatalf("the pasted retry failed:\n%s", sh)
				}
				if st := clitest.RecordState(t, r, filepath.Base(path)); st != "finished" {
					t.Errorf("after the pasted retry the tree is %s, want finished\n%s", st, sh)
				}
			},
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := clitest.InitSpacedRepo(t, fixtures.Options{})
				id, _ := clitest.NewTree(t, r, "leased")
				st, err := store.Open(filepath.Join(r.Dir, ".git", "custody", "state.db"), 5*time.Second, false)
				if err != nil {
					t.Fatal(err)
				}
				if err := st.PutLease(machine.Lease{Record: id, Holder: "agent-1", Expires: time.Now().Add(time.Hour)}); err != nil {
					t.Fatal(err)
				}
				return at(r, id)
			}},
		{cmd: "remove", name: "unknown_id", exit: 1, code: "unknown-record",
			setup: initialized("nosuch-123456")},
		{cmd: "remove", name: "outside_worktree", exit: 1, code: "not-in-worktree",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := clitest.InitSpacedRepo(t, fixtures.Options{})
				clitest.NewTree(t, r, "somewhere")
				return at(r)
			}},
		{cmd: "remove", name: "unpushed", exit: 3, code: "unpushed-commits",
			pasted: func(t *testing.T, r *fixtures.Repo, path string, sh clitest.Result) {
				// Pushed: remove, run again as it says next, lets the tree go.
				if sh.Code != 0 {
					t.Fatalf("the pasted push failed:\n%s", sh)
				}
				clitest.MustCustody(t, r, 0, "remove", filepath.Base(path))
				rtTombstoned(t, r, path, sh)
			},
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := clitest.InitSpacedRepo(t, fixtures.Options{})
				id, path := clitest.NewTree(t, r, "unpushed")
				r.Commit(path, "work.txt", "committed, never pushed\n")
				return at(r, id)
			}},
		{cmd: "reopen", name: "unknown_id", exit: 1, code: "unknown-record",
			setup: initialized("nosuch-123456")},
		{cmd: "abandon", name: "unknown_id", exit: 1, code: "unknown-record",
			setup: initialized("nosuch-123456", "--acknowledge-unrecoverable", strings.Repeat("0", 40))},
		{cmd: "land", name: "diverged", exit: 3, code: "land-diverged",
			pasted: func(t *testing.T, r *fixtures.Repo, path string, sh clitest.Result) {
				// The retry rebases onto the moved main and lets the tree go.
				if sh.Code != 0 {
					t.Fatalf("the pasted land --rebase failed:\n%s", sh)
				}
				rtTombstoned(t, r, path, sh)
			},
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := clitest.InitSpacedRepo(t, fixtures.Options{})
				id, path := clitest.NewTree(t, r, "diverged")
				r.Commit(path, "work.txt", "the tree's work\n")
				r.Commit(r.Dir, "theirs.txt", "main moved on\n")
				r.Git("push", "-q", "origin", "main")
				return at(r, id, "--yes")
			}},
		{cmd: "abandon", name: "tree_present", exit: 3, code: "wrong-state",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := clitest.InitSpacedRepo(t, fixtures.Options{})
				id, path := clitest.NewTree(t, r, "present")
				return at(r, id, "--acknowledge-unrecoverable", r.Head(path))
			}},
		{cmd: "plan", name: "kept_tree", exit: 0, code: "untracked-files",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := clitest.InitSpacedRepo(t, fixtures.Options{})
				rtKept(t, r)
				return at(r)
			}},
		{cmd: "plan", name: "unpushed", exit: 0, code: "unpushed-commits",
			pasted: func(t *testing.T, r *fixtures.Repo, _ string, sh clitest.Result) {
				// Pushed: plan now proves the tree published.
				if sh.Code != 0 {
					t.Errorf("the pasted push failed:\n%s", sh)
				}
				clitest.MustCustody(t, r, 0, "plan")
			},
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := clitest.InitSpacedRepo(t, fixtures.Options{})
				id, path := clitest.NewTree(t, r, "unpushed")
				r.Commit(path, "work.txt", "committed, never pushed\n")
				clitest.MustCustody(t, r, 0, "finish", id)
				return at(r)
			}},
		{cmd: "plan", name: "config_invalid", exit: 1, code: "config-invalid",
			doctor: "doctor reads a broken custody.toml and names its file, line and key",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := clitest.InitSpacedRepo(t, fixtures.Options{})
				r.WriteFile(r.Dir, "custody.toml", "[worktree]\nbranch_prefx = \"x/\"\n")
				return at(r)
			}},
		{cmd: "plan", name: "no_remote", exit: 1, code: "no-remote",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := clitest.InitSpacedRepo(t, fixtures.Options{NoRemote: true})
				id, _ := clitest.NewTree(t, r, "unproven")
				clitest.MustCustody(t, r, 0, "finish", id)
				return at(r)
			}},
		{cmd: "apply", name: "garbage", exit: 1, code: "plan-invalid",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := clitest.InitSpacedRepo(t, fixtures.Options{})
				r.WriteFile(r.Root, "garbage.json", "not a plan\n")
				return at(r, filepath.Join(r.Root, "garbage.json"))
			}},
		{cmd: "apply", name: "other_repository", exit: 1, code: "wrong-repository",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				a, b := clitest.InitSpacedRepo(t, fixtures.Options{}), clitest.InitSpacedRepo(t, fixtures.Options{})
				return at(b, clitest.PlanOutside(t, a, 0))
			}},
		{cmd: "apply", name: "stale", exit: 3, code: "stale",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := clitest.InitSpacedRepo(t, fixtures.Options{})
				id, path := clitest.NewTree(t, r, "late")
				clitest.MustCustody(t, r, 0, "finish", id)
				file := clitest.PlanOutside(t, r, 0)
				r.WriteFile(path, "late.txt", "written after plan\n")
				return at(r, file)
			}},
		{cmd: "apply", name: "not_in_plan", exit: 1, code: "not-in-plan",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := clitest.InitSpacedRepo(t, fixtures.Options{})
				return at(r, clitest.PlanOutside(t, r, 0), "--only", "nosuch-123456")
			}},
		{cmd: "resume", name: "unmatched", exit: 3, code: "resume-unmatched",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := clitest.InitSpacedRepo(t, fixtures.Options{})
				clitest.MustBeKilled(t, r, "new/after-intent", "new", "x")
				recs := clitest.ListRecords(t, r, true)
				if len(recs) != 1 || recs[0].Intent == nil {
					t.Fatalf("want one record with a create intent, got %+v", recs)
				}
				r.WriteFile(recs[0].Path, "mine.txt", "a person's work\n")
				return at(r)
			}},
		{cmd: "resume", name: "unsafe_root", exit: 1, code: "unsafe-target",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) { return at(rtUnsafeRoot(t)) }},
		{cmd: "journal export", name: "directory", exit: 1, code: "unsafe-target",
			placeholder: "the new file's name is the person's to choose: the one they named is in the way",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := clitest.InitSpacedRepo(t, fixtures.Options{})
				dir := filepath.Join(r.Root, "out dir")
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				return at(r, "-o", dir)
			}},
		{cmd: "journal verify", name: "edited", exit: 1, code: "journal-broken",
			doctor: "doctor checks the store's own hash chain: it tells an export edited after the fact from a broken journal",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := clitest.InitSpacedRepo(t, fixtures.Options{})
				clitest.NewTree(t, r, "a")
				file := filepath.Join(r.Root, "j.jsonl")
				clitest.MustCustody(t, r, 0, "journal", "export", "-o", file)
				rtEditExport(t, file)
				return at(r, file)
			}},
		{cmd: "journal report", name: "not_initialized", exit: 1, code: "not-initialized",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := rtBare(t)
				return at(r, "-o", filepath.Join(r.Root, "report.html"))
			}},
		{cmd: "journal sign", name: "no_key", exit: 1, code: "signature-invalid",
			placeholder: "the key is the person's to name: the one they named cannot sign",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := clitest.InitSpacedRepo(t, fixtures.Options{})
				clitest.NewTree(t, r, "a")
				return at(r, "-o", filepath.Join(r.Root, "j.sig"), "--key", filepath.Join(r.Root, "no key"))
			}},
		{cmd: "journal head", name: "not_initialized", exit: 1, code: "not-initialized",
			setup: uninitialized},
		{cmd: "journal head", name: "schema_newer", exit: 1, code: "schema-newer",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := clitest.InitSpacedRepo(t, fixtures.Options{})
				setStateMeta(t, r, "schema", "99")
				return at(r)
			}},
		{cmd: "resource identity", name: "unknown_name", exit: 1, code: "unknown-record",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := clitest.InitSpacedRepo(t, fixtures.Options{})
				id, _ := clitest.NewTree(t, r, "a")
				return at(r, "nosuch", "--id", id)
			}},
		{cmd: "resource identity", name: "outside_worktree", exit: 1, code: "not-in-worktree",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				return at(rtResources(t, "true", "true", "true"), "db")
			}},
		{cmd: "resource ensure", name: "failed", exit: 3, code: "resource-failed",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := rtResources(t, "true", "true", "exit 4")
				id, _ := clitest.NewTree(t, r, "a")
				return at(r, id)
			}},
		{cmd: "resource ensure", name: "unknown_id", exit: 1, code: "unknown-record",
			setup: initialized("nosuch-123456")},
		{cmd: "resource gc", name: "destroy_failed", exit: 3, code: "resource-failed",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := rtResources(t, "true", "exit 5", "true")
				id, _ := clitest.NewTree(t, r, "gone")
				clitest.MustCustody(t, r, 0, "finish", id)
				clitest.MustCustody(t, r, 3, "apply", clitest.PlanOutside(t, r, 0))
				return at(r)
			}},
		{cmd: "resource list", name: "not_initialized", exit: 1, code: "not-initialized",
			setup: uninitialized},
		{cmd: "doctor", name: "not_initialized", exit: 1, code: "not-initialized",
			setup: uninitialized},
		{cmd: "trust", name: "config_symlink", exit: 1, code: "config-invalid",
			doctor: "doctor reads custody.toml and says why it cannot be used (here: it is a symlink)",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := clitest.InitSpacedRepo(t, fixtures.Options{})
				if err := os.Symlink("/dev/zero", filepath.Join(r.Dir, "custody.toml")); err != nil {
					t.Fatal(err)
				}
				return at(r)
			}},
		{cmd: "config upgrade", name: "newer_version", exit: 1, code: "config-invalid",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := rtBare(t)
				r.WriteFile(r.Dir, "custody.toml", "version = 2\n")
				return at(r)
			}},
		{cmd: "new", name: "config_untrusted", exit: 1, code: "config-untrusted",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := clitest.InitSpacedRepo(t, fixtures.Options{})
				r.WriteFile(r.Dir, "custody.toml", "[resources.db]\ncreate = 'true'\ndestroy = 'true'\n")
				return at(r, "fix")
			}},
		{cmd: "migrate discover", name: "scan_limit", exit: 1, code: "discovery-incomplete",
			setup: initialized("--scan-limit", "1")},
		{cmd: "migrate plan", name: "scan_limit", exit: 1, code: "discovery-incomplete",
			setup: initialized("-o", "migrate.json", "--scan-limit", "1")},
		{cmd: "migrate dispose", name: "unknown_candidate", exit: 1, code: "migrate-not-candidate",
			setup: initialized("nosuch", "--approve", "--digest", "sha256:00")},
		{cmd: "migrate apply", name: "garbage", exit: 1, code: "plan-invalid",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := clitest.InitSpacedRepo(t, fixtures.Options{})
				r.WriteFile(r.Root, "garbage.json", "not a migrate plan\n")
				return at(r, filepath.Join(r.Root, "garbage.json"))
			}},
		{cmd: "migrate status", name: "not_initialized", exit: 1, code: "not-initialized",
			setup: uninitialized},
		{cmd: "relocate", name: "dirty", exit: 3, code: "untracked-files",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := clitest.InitSpacedRepo(t, fixtures.Options{})
				id, path := clitest.NewTree(t, r, "dirty")
				r.WriteFile(path, "draft.txt", "not committed\n")
				return at(r, id, "--to", filepath.Join(r.Root, "away"))
			}},
		{cmd: "skill", name: "stale", exit: 1, code: "generated-stale",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := rtBare(t)
				r.WriteFile(r.Dir, "skills/custody/SKILL.md", "an older skill\n")
				return at(r, "--out", "skills/custody", "--check")
			}},
		{cmd: "completion", name: "unknown_shell", exit: 1, code: "usage",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) { return at(rtBare(t), "tcsh") }},
		{cmd: "man", name: "extra_argument", exit: 1, code: "usage",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) { return at(rtBare(t), "custody") }},
		{cmd: "help", name: "unknown_command", exit: 1, code: "usage",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) { return at(rtBare(t), "frobnicate") }},
		{cmd: "version", name: "extra_argument", exit: 1, code: "usage",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) { return at(rtBare(t), "custody") }},
		{cmd: "integrate codex", name: "stale", exit: 1, code: "codex-environment-stale",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := clitest.InitSpacedRepo(t, fixtures.Options{})
				r.WriteFile(r.Dir, ".codex/environments/environment.toml", "version = 1\nname = \"app\"\n")
				return at(r, "--check")
			},
			pasted: func(t *testing.T, r *fixtures.Repo, path string, sh clitest.Result) {
				if sh.Code != 0 {
					t.Fatalf("the pasted retry failed:\n%s", sh)
				}
				clitest.MustCustody(t, r, 0, "integrate", "codex", "--check")
			}},
		{cmd: "teardown", name: "outside_worktree", exit: 1, code: "not-in-worktree",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := clitest.InitSpacedRepo(t, fixtures.Options{})
				clitest.NewTree(t, r, "somewhere")
				return at(r)
			}},
		{cmd: "teardown", name: "destroy_failed", exit: 3, code: "resource-failed",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				// The destroy fails while a blocker file exists; the retry,
				// pasted once it is gone, destroys the resource.
				r := rtResources(t, `touch "$CUSTODY_RESOURCE.blocker"`, `test ! -e "$CUSTODY_RESOURCE.blocker"`, "true")
				_, path := clitest.NewTree(t, r, "busy")
				return r, path, nil
			},
			pasted: func(t *testing.T, r *fixtures.Repo, path string, sh clitest.Result) {
				if sh.Code != 3 {
					t.Fatalf("the pasted retry while the blocker stands: want exit 3 again\n%s", sh)
				}
				blockers, _ := filepath.Glob(filepath.Join(r.Dir, ".worktrees", "*", "*.blocker"))
				if len(blockers) != 1 {
					t.Fatalf("blockers %v", blockers)
				}
				if err := os.Remove(blockers[0]); err != nil {
					t.Fatal(err)
				}
				tree := filepath.Dir(blockers[0])
				res := clitest.RunBin(t, clitest.Bin(), r, r.Root, nil, "-C", tree, "teardown", "--json")
				if res.Code != 0 {
					t.Fatalf("teardown after the blocker went:\n%s", res)
				}
				type outcomes struct {
					Resources []struct{ Outcome machine.Outcome }
				}
				if td := clitest.DecodeResult[outcomes](t, res, "teardown"); len(td.Resources) != 1 || td.Resources[0].Outcome != machine.OutcomeDestroyed {
					t.Errorf("teardown after the blocker went: %+v", td)
				}
			}},
		{cmd: "hook session-start", name: "main_checkout", exit: 0, code: "not-in-worktree",
			setup: initialized("--session", "s1")},
		{cmd: "hook heartbeat", name: "lease_held", exit: 0, code: "lease-held",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := clitest.InitSpacedRepo(t, fixtures.Options{})
				_, path := clitest.NewTree(t, r, "leased")
				if res := clitest.RunBin(t, clitest.Bin(), r, path, nil, "hook", "session-start", "--session", "a"); !strings.Contains(res.Stdout, `"acquired"`) {
					t.Fatalf("session-start: %s", res)
				}
				return r, path, []string{"--session", "b"}
			}},
		{cmd: "hook session-end", name: "bad_payload", exit: 0, code: "hook-payload-invalid",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := clitest.InitSpacedRepo(t, fixtures.Options{})
				_, path := clitest.NewTree(t, r, "agent")
				return r, path, nil
			}},
		{cmd: "hook worktree-create", name: "no_name", exit: 1, code: "hook-payload-invalid",
			setup: initialized()},
		{cmd: "hook worktree-remove", name: "main_checkout", exit: exitPending, code: "not-in-worktree",
			setup: initialized()},
		{cmd: "integrate claude", name: "invalid", exit: 1, code: "claude-settings-invalid",
			setup: func(t *testing.T) (*fixtures.Repo, string, []string) {
				r := clitest.InitSpacedRepo(t, fixtures.Options{})
				r.WriteFile(filepath.Join(r.Dir, ".claude"), "settings.json", "{\"hooks\": [\n")
				return at(r)
			}},
		{cmd: "integrate claude", name: "stale", exit: 3, code: "claude-settings-stale",
			pasted: func(t *testing.T, r *fixtures.Repo, _ string, sh clitest.Result) {
				if sh.Code != 0 {
					t.Errorf("the pasted integrate failed:\n%s", sh)
				}
				clitest.MustCustody(t, r, 0, "integrate", "claude", "--check")
			},
			setup: initialized("--check")},
	}
}

// rtCommands returns every leaf command of the kong CLI, its words joined
// by a space ("journal verify").
func rtCommands(t *testing.T) []string {
	t.Helper()
	var cli CLI
	parser, err := kong.New(&cli, kong.Name("custody"), kong.Vars{"version": "test"})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(n *kong.Node, words []string)
	walk = func(n *kong.Node, words []string) {
		leaf := true
		for _, c := range n.Children {
			if c.Type == kong.CommandNode {
				leaf = false
				walk(c, append(slices.Clip(words), c.Name))
			}
		}
		if leaf && len(words) > 0 {
			out = append(out, strings.Join(words, " "))
		}
	}
	walk(parser.Model.Node, nil)
	for _, want := range []string{"init", "journal verify", "resource gc"} {
		if !slices.Contains(out, want) {
			t.Fatalf("the kong model's commands %v lack %q: the walk is broken", out, want)
		}
	}
	return out
}

// TestRetryCoversEveryCommand: every command has a case in rtCases and a
// script e2e/scripts/<feature>/testdata/script/<command>_refused_<case>.txtar, and every case
// and script names a command that exists.
func TestRetryCoversEveryCommand(t *testing.T) {
	t.Parallel()
	cmds := rtCommands(t)
	cased := map[string]bool{}
	for _, c := range rtCases() {
		if !slices.Contains(cmds, c.cmd) {
			t.Errorf("case %s_%s: no command %q in the CLI (%v)", c.cmd, c.name, c.cmd, cmds)
		}
		cased[c.cmd] = true
	}
	scripts, err := filepath.Glob(filepath.Join("e2e", "scripts", "*", "testdata", "script", "*_refused_*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	// A script's name is its command's words joined by _ (a command's own
	// name may hold _ too: __complete).
	byPrefix := map[string]string{}
	for _, cmd := range cmds {
		byPrefix[strings.ReplaceAll(cmd, " ", "_")] = cmd
	}
	scripted := map[string]bool{}
	for _, s := range scripts {
		prefix, _, _ := strings.Cut(filepath.Base(s), "_refused_")
		cmd, ok := byPrefix[prefix]
		if !ok {
			t.Errorf("%s: no command %q in the CLI", s, strings.ReplaceAll(prefix, "_", " "))
		}
		scripted[cmd] = true
	}
	for _, cmd := range cmds {
		if !cased[cmd] {
			t.Errorf("command %q has no case in rtCases: provoke one of its refusals (or, if it has none of its own, a shared error such as not-initialized) and check its retry", cmd)
		}
		if !scripted[cmd] {
			t.Errorf("command %q has no script e2e/scripts/<feature>/testdata/script/%s_refused_<case>.txtar showing a refusal and its retry line", cmd, strings.ReplaceAll(cmd, " ", "_"))
		}
	}
}

// TestRetryEveryCommand runs every case, human and --json.
func TestRetryEveryCommand(t *testing.T) {
	t.Parallel()
	for _, c := range rtCases() {
		t.Run(strings.ReplaceAll(c.cmd, " ", "_")+"_"+c.name, func(t *testing.T) {
			t.Parallel()
			r, dir, args := c.setup(t)
			if dir == "" {
				dir = r.Dir
			}
			args = append(strings.Fields(c.cmd), args...)

			res := clitest.RunBin(t, clitest.Bin(), r, dir, nil, args...)
			if res.Code != c.exit {
				t.Fatalf("custody %s: exit %d, want %d\n%s", strings.Join(args, " "), res.Code, c.exit, res)
			}
			if c.exit == exitError && res.Stdout != "" {
				t.Errorf("custody %s: an error prints nothing on stdout\n%s", strings.Join(args, " "), res)
			}
			if !strings.Contains(res.Stdout+res.Stderr, "["+c.code+"]: ") {
				t.Errorf("custody %s: no refusal [%s] printed\n%s", strings.Join(args, " "), c.code, res)
			}
			for _, out := range []string{res.Stdout, res.Stderr} {
				for _, p := range rtHumanProblems(out, c, r) {
					t.Errorf("custody %s: %s\n%s", strings.Join(args, " "), p, res)
				}
			}

			jargs := append(slices.Clip(args), "--json")
			res = clitest.RunBin(t, clitest.Bin(), r, dir, nil, jargs...)
			if res.Code != c.exit {
				t.Fatalf("custody %s: exit %d, want %d\n%s", strings.Join(jargs, " "), res.Code, c.exit, res)
			}
			envelope := res.Stdout
			if c.exit == exitError {
				if res.Stdout != "" {
					t.Errorf("custody %s: an error prints nothing on stdout\n%s", strings.Join(jargs, " "), res)
				}
				envelope = res.Stderr
			}
			var v any
			if err := json.Unmarshal([]byte(envelope), &v); err != nil {
				t.Fatalf("custody %s: not one JSON envelope: %v\n%s", strings.Join(jargs, " "), err, res)
			}
			refusals := clitest.JSONRefusals(v)
			found := false
			for _, ref := range refusals {
				found = found || ref.Code == c.code
				if p := rtRetryProblem(ref.Retry, c, r); p != "" {
					t.Errorf("custody %s: refusal [%s] %q: %s\n%s", strings.Join(jargs, " "), ref.Code, ref.Retry, p, res)
				}
			}
			if !found {
				t.Errorf("custody %s: no refusal object with code %s in the envelope\n%s", strings.Join(jargs, " "), c.code, res)
			}
			if c.pasted != nil {
				rtPaste(t, r, dir, refusals, c)
			}
		})
	}
}

// rtPaste pastes the retry of c's refusal into a shell as it is and hands
// the world to c.pasted.
func rtPaste(t *testing.T, r *fixtures.Repo, dir string, refusals []clitest.JSONRefusal, c rtCase) {
	t.Helper()
	i := slices.IndexFunc(refusals, func(ref clitest.JSONRefusal) bool { return ref.Code == c.code })
	if i < 0 {
		t.Fatalf("no refusal [%s] to paste the retry of", c.code)
	}
	sh := clitest.RunBin(t, "sh", r, dir, []string{clitest.PathEnv(filepath.Dir(clitest.Bin()))}, "-c", refusals[i].Retry)
	t.Logf("pasted %q:\n%s", refusals[i].Retry, sh)
	c.pasted(t, r, refusals[i].Path, sh)
}

// rtRefusalLine is a refusal's fact in human output: `<subject> [<code>]: <message>`.
var rtRefusalLine = regexp.MustCompile(`\[([a-z0-9-]+)\]: `)

// rtHumanProblems checks that every refusal line of out is followed by
// `\tto retry: <command>` naming a command that helps.
func rtHumanProblems(out string, c rtCase, r *fixtures.Repo) []string {
	var problems []string
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		m := rtRefusalLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		// A hook's refusal is one line, its retry at the end (an agent's
		// log keeps a hook's stderr line by line).
		if j := strings.LastIndex(l, "; next: "); strings.HasPrefix(l, "custody hook ") && j >= 0 {
			if p := rtRetryProblem(l[j+len("; next: "):], c, r); p != "" {
				problems = append(problems, "refusal ["+m[1]+"] retry "+strconv.Quote(l[j+len("; next: "):])+": "+p)
			}
			continue
		}
		if i+1 >= len(lines) {
			problems = append(problems, "refusal line "+strconv.Quote(l)+" is the last line: no retry line follows")
			continue
		}
		retry, ok := strings.CutPrefix(lines[i+1], "\tto retry: ")
		if !ok {
			problems = append(problems, "refusal line "+strconv.Quote(l)+" is followed by "+strconv.Quote(lines[i+1])+", not \"\\tto retry: <command>\"")
			continue
		}
		if p := rtRetryProblem(retry, c, r); p != "" {
			problems = append(problems, "refusal ["+m[1]+"] retry "+strconv.Quote(retry)+": "+p)
		}
	}
	return problems
}

// rtPlaceholder matches what a person would have to replace before a
// command runs: an elision, or a word in capitals (FILE, ID, NAME, URL) other
// than git's HEAD.
var rtPlaceholder = regexp.MustCompile(`\.\.\.|\b[A-Z][A-Z0-9]+(?:-[A-Z0-9]+)*\b`)

// rtSingleQuoted is a single-quoted shell word part (machine.QuoteArg).
var rtSingleQuoted = regexp.MustCompile(`'[^']*'`)

// rtRetryProblem says what keeps retry from being a command that helps
// when pasted as it is, "" when nothing does.
func rtRetryProblem(retry string, c rtCase, r *fixtures.Repo) string {
	switch {
	case strings.TrimSpace(retry) == "":
		return "no retry command"
	case retry == retryOf(&machine.Refusal{}) && c.doctor == "":
		return "only the custody doctor fallback: name the command that retries this refusal"
	}
	if err := exec.Command("sh", "-n", "-c", retry).Run(); err != nil {
		return "not a shell command line (sh -n: " + err.Error() + ")"
	}
	unquoted := rtSingleQuoted.ReplaceAllString(retry, "''")
	for _, part := range strings.Split(unquoted, "&&") {
		if w := strings.Fields(part); len(w) == 0 || w[0] != "custody" && w[0] != "git" {
			return "not a custody or git command"
		}
	}
	if strings.Contains(unquoted, r.Root) {
		return "names a path without quoting it (machine.QuoteArg)"
	}
	for _, p := range rtPlaceholder.FindAllString(unquoted, -1) {
		if p != "HEAD" && c.placeholder == "" {
			return "holds placeholder " + p + ": it fails when pasted; give the value custody knows, or the command that shows it"
		}
	}
	return ""
}

// setStateMeta writes key = value into the meta bucket of r's state file
// behind custody's back: a schema no command writes.
func setStateMeta(t *testing.T, r *fixtures.Repo, key, value string) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(r.Dir, ".git", "custody", "state.db"), 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(func(tx *bolt.Tx) error { return tx.Bucket([]byte("meta")).Put([]byte(key), []byte(value)) }); err != nil {
		t.Fatal(err)
	}
}

// arRetryIncomplete is the world of `archive list`'s retry case: an
// archive whose bundle was deleted.
func arRetryIncomplete(t *testing.T) (*fixtures.Repo, string, []string) {
	t.Helper()
	r := clitest.InitSpacedRepo(t, fixtures.Options{})
	id, wt := clitest.NewTree(t, r, "spike")
	r.Commit(wt, "a.txt", "one\n")
	a := clitest.CreateArchive(t, r, id)
	if err := os.Remove(filepath.Join(a.Dir, machine.ArchiveBundleName)); err != nil {
		t.Fatal(err)
	}
	return r, "", nil
}

// arRetryTargetNotEmpty is the world of `archive restore`'s retry case: a
// restore into the main checkout, which is not empty.
func arRetryTargetNotEmpty(t *testing.T) (*fixtures.Repo, string, []string) {
	t.Helper()
	r := clitest.InitSpacedRepo(t, fixtures.Options{})
	id, wt := clitest.NewTree(t, r, "spike")
	r.Commit(wt, "a.txt", "one\n")
	a := clitest.CreateArchive(t, r, id)
	return r, "", []string{a.ID, r.Dir}
}
