//go:build unix

package shell

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/google/go-cmp/cmp"
)

// oddName is a repository directory name no shell word holds unquoted: a
// space, both quotes, a glob, a dollar, a backslash, a newline and a byte
// that is not UTF-8. Every tree's path holds it.
const oddName = "it's a \"repo\" *$HOME\\\nx\xff"

// needShell skips the test when shell is not installed, saying which shell
// and what goes unchecked.
func needShell(t *testing.T, shell, unchecked string) {
	t.Helper()
	if _, err := exec.LookPath(shell); err != nil {
		t.Skipf("%s is not installed, so %s is not checked in it (CI installs it: .ci/run)", shell, unchecked)
	}
}

// shellInit is what custody shell-init prints for shell.
func shellInit(t *testing.T, shell string) []byte {
	t.Helper()
	out, err := exec.Command(clitest.Bin(), "shell-init", shell).Output()
	if err != nil {
		t.Fatalf("custody shell-init %s: %v", shell, err)
	}
	return out
}

// shellEnv is r's environment with the custody binary first on PATH, as a
// person's shell finds it.
func shellEnv(r *fixtures.Repo) []string {
	return append(r.Env(), "PATH="+filepath.Dir(clitest.Bin())+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// TestShellInitParses: each shell reads its function without a syntax
// error (bash -n, zsh -n, fish --no-execute).
func TestShellInitParses(t *testing.T) {
	t.Parallel()
	for shell, check := range map[string][]string{"bash": {"-n"}, "zsh": {"-n"}, "fish": {"--no-execute"}} {
		t.Run(shell, func(t *testing.T) {
			t.Parallel()
			needShell(t, shell, "the function's syntax")
			p := filepath.Join(t.TempDir(), "init."+shell)
			if err := os.WriteFile(p, shellInit(t, shell), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(shell, append(check, p)...).CombinedOutput(); err != nil {
				t.Errorf("%s %v %s: %v\n%s", shell, check, p, err, out)
			}
		})
	}
}

// step is one command line run through the loaded function: the exit
// status it returned and the shell's directory after it.
type step struct {
	Line string
	Exit string
	Dir  string
}

// shellPrograms are, by shell, a program that loads the function
// (custody shell-init SHELL) and runs each step, printing after each its
// exit status and $PWD, each ended by NUL. Its arguments: the main
// checkout, the first tree's id, the file new's stdout goes to, the file
// the --json switch's stdout goes to.
var shellPrograms = map[string][]string{
	"bash": {"bash", "--norc", "--noprofile", "-c", shProgram("bash")},
	"zsh":  {"zsh", "-f", "-c", shProgram("zsh")},
	"fish": {"fish", "--no-config", "-c", fishProgram},
}

// shProgram is the steps in bash or zsh.
func shProgram(shell string) string {
	return `eval "$(custody shell-init ` + shell + `)" || exit 9
mark() { printf '%s\0%s\0' "$1" "$PWD"; }
main=$1 id=$2 newout=$3 jsonout=$4
cd -- "$main" || exit 9
custody switch "$id"; mark $?
custody new 'next one' >"$newout"; mark $?
custody switch nosuch-123456 2>/dev/null; mark $?
custody --json switch "$id" >"$jsonout"; mark $?
cd / || exit 9
custody -C "$main" switch "$id"; mark $?
custody --chdir="$main" show nosuch-123456 2>/dev/null; mark $?
custody list --frobnicate 2>/dev/null; mark $?
`
}

// fishProgram is the steps in fish.
const fishProgram = `custody shell-init fish | source; or exit 9
function mark; printf '%s\0%s\0' $argv[1] $PWD; end
set main $argv[1]; set id $argv[2]; set newout $argv[3]; set jsonout $argv[4]
cd -- $main; or exit 9
custody switch $id; mark $status
custody new 'next one' >$newout; mark $status
custody switch nosuch-123456 2>/dev/null; mark $status
custody --json switch $id >$jsonout; mark $status
cd /; or exit 9
custody -C $main switch $id; mark $status
custody --chdir=$main show nosuch-123456 2>/dev/null; mark $status
custody list --frobnicate 2>/dev/null; mark $status
`

// TestShellFunctionChangesDirectory loads the function in bash, zsh and
// fish and runs custody through it in a repository whose path holds
// oddName: switch and new change into the tree, byte for byte; a refused
// switch, --json, and every other command leave the directory alone and
// return the binary's exit status; global flags before the command are
// passed by.
func TestShellFunctionChangesDirectory(t *testing.T) {
	t.Parallel()
	for _, shell := range []string{"bash", "zsh", "fish"} {
		t.Run(shell, func(t *testing.T) {
			t.Parallel()
			needShell(t, shell, "the function's changing directory")
			r := clitest.InitSpacedRepo(t, fixtures.Options{Name: oddName})
			id, path := clitest.NewTree(t, r, "fix")
			if !strings.Contains(path, oddName) {
				t.Fatalf("tree path %q does not hold %q", path, oddName)
			}
			dir := t.TempDir()
			newout, jsonout := filepath.Join(dir, "new.out"), filepath.Join(dir, "json.out")
			argv := slices.Clone(shellPrograms[shell])
			if shell != "fish" {
				argv = append(argv, shell) // $0 of -c: the arguments start at $1
			}
			cmd := exec.Command(argv[0], append(argv[1:], r.Dir, id, newout, jsonout)...)
			cmd.Env = shellEnv(r)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("%s: %v\nstderr:\n%s", shell, err, stderr.String())
			}
			newTree, err := os.ReadFile(newout)
			if err != nil {
				t.Fatal(err)
			}
			newPath, ok := strings.CutSuffix(string(newTree), "\n")
			if !ok || !strings.HasPrefix(newPath, filepath.Join(r.Dir, ".worktrees", "next-one-")) {
				t.Fatalf("custody new through the function printed %q, not the new tree's path and a newline", newTree)
			}
			lines := []string{"switch ID", "new 'next one'", "switch nosuch-123456", "--json switch ID", "-C MAIN switch ID", "--chdir=MAIN show nosuch-123456", "list --frobnicate"}
			want := []step{
				{lines[0], "0", path},
				{lines[1], "0", newPath},
				{lines[2], "1", newPath},
				{lines[3], "0", newPath},
				{lines[4], "0", path},
				{lines[5], "1", path},
				{lines[6], "1", path},
			}
			fields := strings.Split(strings.TrimSuffix(stdout.String(), "\x00"), "\x00")
			var got []step
			for i := 0; i+1 < len(fields) && i/2 < len(lines); i += 2 {
				got = append(got, step{lines[i/2], fields[i], fields[i+1]})
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s: exit status and directory after each command (-want +got):\n%s\nstderr:\n%s", shell, diff, stderr.String())
			}
			if js, err := os.ReadFile(jsonout); err != nil || !bytes.HasPrefix(js, []byte("{\n")) || !bytes.Contains(js, []byte(`"command": "switch"`)) {
				t.Errorf("%s: custody --json switch through the function printed %q (%v), not its envelope", shell, js, err)
			}
			if strings.Contains(stderr.String(), "to change directory") {
				t.Errorf("%s: switch run by the function still says how to load it:\n%s", shell, stderr.String())
			}
		})
	}
}

// removePrograms are, by shell, a program that loads the function and,
// standing in the tree given first, runs custody remove with no id, then,
// standing in the tree given second (which holds an untracked file),
// custody remove with no id, then custody remove of the first tree again,
// printing after each its exit status and $PWD, each ended by NUL.
var removePrograms = map[string][]string{
	"bash": {"bash", "--norc", "--noprofile", "-c", removeSh("bash")},
	"zsh":  {"zsh", "-f", "-c", removeSh("zsh")},
	"fish": {"fish", "--no-config", "-c", removeFish},
}

// removeSh is the remove steps in bash or zsh.
func removeSh(shell string) string {
	return `eval "$(custody shell-init ` + shell + `)" || exit 9
mark() { printf '%s\0%s\0' "$1" "$PWD"; }
cd -- "$1" || exit 9
custody remove; mark $?
cd -- "$2" || exit 9
custody remove; mark $?
custody remove "$3"; mark $?
`
}

// removeFish is the remove steps in fish.
const removeFish = `custody shell-init fish | source; or exit 9
function mark; printf '%s\0%s\0' $argv[1] $PWD; end
cd -- $argv[1]; or exit 9
custody remove; mark $status
cd -- $argv[2]; or exit 9
custody remove; mark $status
custody remove $argv[3]; mark $status
`

// TestShellFunctionLeavesRemovedTree loads the function in bash, zsh and
// fish, in a repository whose path holds oddName, and runs custody remove
// through it while the shell stands in the tree: the shell that asked does
// not count as using the tree, the tree is removed, and the shell is then
// in the main checkout; a tree kept (an untracked file) leaves the shell
// where it is with exit 3, and removing another tree leaves it there too.
// The shell is excused by the parent chain read from /proc, so off Linux
// (where custody keeps a tree its own shell stands in) it is not run.
func TestShellFunctionLeavesRemovedTree(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("the requesters are read from /proc: off Linux a shell standing in a tree keeps it")
	}
	for _, shell := range []string{"bash", "zsh", "fish"} {
		t.Run(shell, func(t *testing.T) {
			t.Parallel()
			needShell(t, shell, "the function's leaving a removed tree")
			r := clitest.InitSpacedRepo(t, fixtures.Options{Name: oddName})
			id, path := clitest.NewTree(t, r, "done")
			_, kept := clitest.NewTree(t, r, "kept")
			r.WriteFile(kept, "notes.txt", "only here\n")
			main, err := filepath.EvalSymlinks(r.Dir)
			if err != nil {
				t.Fatal(err)
			}
			argv := slices.Clone(removePrograms[shell])
			if shell != "fish" {
				argv = append(argv, shell)
			}
			cmd := exec.Command(argv[0], append(argv[1:], path, kept, id)...)
			cmd.Env = shellEnv(r)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("%s: %v\nstderr:\n%s", shell, err, stderr.String())
			}
			lines := []string{"remove (in the tree)", "remove (in a kept tree)", "remove ID (gone already)"}
			want := []step{{lines[0], "0", main}, {lines[1], "3", kept}, {lines[2], "0", kept}}
			fields := strings.Split(strings.TrimSuffix(stdout.String(), "\x00"), "\x00")
			var got []step
			for i := 0; i+1 < len(fields) && i/2 < len(lines); i += 2 {
				got = append(got, step{lines[i/2], fields[i], fields[i+1]})
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s: exit status and directory after each command (-want +got):\n%s\nstderr:\n%s", shell, diff, stderr.String())
			}
			if _, err := os.Lstat(path); !os.IsNotExist(err) {
				t.Errorf("%s: the removed tree is still there (%v)", shell, err)
			}
			if !strings.Contains(stderr.String(), "removed "+id) || !strings.Contains(stderr.String(), "[untracked-files]") {
				t.Errorf("%s: the report did not reach stderr:\n%s", shell, stderr.String())
			}
		})
	}
}
