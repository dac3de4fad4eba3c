//go:build unix

package observe_test

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
)

func needProc(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("processes are read from /proc on Linux only")
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
}

// inuseRoot returns a fresh temporary directory with symlinks resolved, as
// the kernel reports resolved paths.
func inuseRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// spawnUser starts, from a shell running in dir, a background process
// (script must end with "& echo $!; wait") and returns that process's pid
// once it runs comm. The shell is a direct child of the test, which
// ScanProcesses leaves out as one of the caller's own commands; the
// background process is the shell's child, as a user's process would be.
// Both are killed and reaped in t.Cleanup.
func spawnUser(t *testing.T, dir, comm, script string, args ...string) int {
	t.Helper()
	return spawnUserFrom(t, "sh", dir, comm, script, args...)
}

// spawnUserFrom is spawnUser with another shell program.
func spawnUserFrom(t *testing.T, shell, dir, comm, script string, args ...string) int {
	t.Helper()
	cmd := exec.Command(shell, append([]string{"-c", script, "sh"}, args...)...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the background pid: %v", err)
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("background pid %q: %v", line, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm"))
		if err == nil && strings.TrimSpace(string(b)) == comm {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d never ran %s (comm %q, %v)", pid, comm, b, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

const sleeper = "sleep 30 </dev/null >/dev/null 2>&1 & echo $!; wait"

func inside(t *testing.T, p *observe.Processes, dir string) []machine.Process {
	t.Helper()
	ps, err := p.Inside(dir)
	if err != nil {
		t.Fatalf("Inside(%s): %v", dir, err)
	}
	return ps
}

func findPID(ps []machine.Process, pid int) (machine.Process, bool) {
	for _, p := range ps {
		if p.PID == pid {
			return p, true
		}
	}
	return machine.Process{}, false
}

func TestInUseCwd(t *testing.T) {
	t.Parallel()
	needProc(t)
	root := inuseRoot(t)
	tree := filepath.Join(root, "tree")
	deep := filepath.Join(tree, "a", "b")
	sibling := filepath.Join(root, "tree2") // shares tree's name as a prefix
	for _, d := range []string{deep, sibling} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	atRoot := spawnUser(t, tree, "sleep", sleeper)
	below := spawnUser(t, deep, "sleep", sleeper)
	outside := spawnUser(t, sibling, "sleep", sleeper)

	procs := observe.ScanProcesses()
	if procs.Err != "" {
		t.Fatalf("ScanProcesses: %s", procs.Err)
	}
	// Exactly the two sleeps: not the shells that started them (the
	// caller's own children), not the one in the sibling directory.
	want := []machine.Process{
		{PID: atRoot, Command: "sleep", Via: "cwd"},
		{PID: below, Command: "sleep", Via: "cwd"},
	}
	got := inside(t, procs, tree)
	if d := cmp.Diff(want, got, cmpSortProcs); d != "" {
		t.Errorf("Inside(tree) (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]machine.Process{{PID: below, Command: "sleep", Via: "cwd"}}, inside(t, procs, deep)); d != "" {
		t.Errorf("Inside(tree/a/b) (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]machine.Process{{PID: outside, Command: "sleep", Via: "cwd"}}, inside(t, procs, sibling)); d != "" {
		t.Errorf("Inside(tree2) (-want +got):\n%s", d)
	}
}

var cmpSortProcs = cmpopts.SortSlices(func(a, b machine.Process) bool { return a.PID < b.PID })

func TestInUseOpenFile(t *testing.T) {
	t.Parallel()
	needProc(t)
	root := inuseRoot(t)
	tree := filepath.Join(root, "tree")
	elsewhere := filepath.Join(root, "elsewhere")
	for _, d := range []string{tree, elsewhere} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(tree, "held file.txt")
	if err := os.WriteFile(file, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	holder := spawnUser(t, elsewhere, "sleep", `exec 3<"$1"; `+sleeper, file)
	// Deleted while held: the kernel's " (deleted)" suffix is dropped.
	deleted := filepath.Join(tree, "deleted.txt")
	if err := os.WriteFile(deleted, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	holderOfDeleted := spawnUser(t, elsewhere, "sleep", `exec 4<"$1"; rm -f -- "$1"; `+sleeper, deleted)
	if _, err := os.Lstat(deleted); err == nil {
		t.Fatal("fixture: deleted.txt still exists")
	}
	idle := spawnUser(t, elsewhere, "sleep", sleeper)

	procs := observe.ScanProcesses()
	got := inside(t, procs, tree)
	want := []machine.Process{
		{PID: holder, Command: "sleep", Via: "open file 3"},
		{PID: holderOfDeleted, Command: "sleep", Via: "open file 4"},
	}
	if d := cmp.Diff(want, got, cmpSortProcs); d != "" {
		t.Errorf("Inside(tree) (-want +got):\n%s", d)
	}
	if p, ok := findPID(got, idle); ok {
		t.Errorf("a process outside the tree is listed: %+v", p)
	}
}

func TestInUseExecutable(t *testing.T) {
	t.Parallel()
	needProc(t)
	root := inuseRoot(t)
	tree := filepath.Join(root, "tree")
	elsewhere := filepath.Join(root, "elsewhere")
	for _, d := range []string{filepath.Join(tree, "bin"), elsewhere} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := copySleep(t, filepath.Join(tree, "bin", "sleep"))
	pid := spawnUser(t, elsewhere, "sleep", `"$1" 30 </dev/null >/dev/null 2>&1 & echo $!; wait`, bin)
	want := []machine.Process{{PID: pid, Command: "sleep", Via: "exe"}}
	if d := cmp.Diff(want, inside(t, observe.ScanProcesses(), tree)); d != "" {
		t.Errorf("Inside(tree) (-want +got):\n%s", d)
	}
	// The running program deleted from the tree: still inside it.
	if err := os.Remove(bin); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, inside(t, observe.ScanProcesses(), tree)); d != "" {
		t.Errorf("Inside(tree) after deleting the program (-want +got):\n%s", d)
	}
}

// copySleep copies the sleep program to dst (skipping the test where there
// is none) and returns dst.
func copySleep(t *testing.T, dst string) string {
	t.Helper()
	sleepPath, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep")
	}
	b, err := os.ReadFile(sleepPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestInUseNeverTheCaller: the calling process (custody itself) holds files
// in the tree while it observes it; it is never its user.
func TestInUseNeverTheCaller(t *testing.T) {
	t.Parallel()
	needProc(t)
	tree := inuseRoot(t)
	f, err := os.Create(filepath.Join(tree, "held"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	procs := observe.ScanProcesses()
	for _, dir := range []string{tree, wd, "/"} {
		if p, ok := findPID(inside(t, procs, dir), os.Getpid()); ok {
			t.Errorf("Inside(%s) lists the calling process: %+v", dir, p)
		}
	}
	if got := inside(t, procs, tree); len(got) != 0 {
		t.Errorf("Inside(tree) = %+v, want nothing", got)
	}
}

// TestInUseUnobservable: when processes could not be observed, every tree
// is in use as far as custody knows.
func TestInUseUnobservable(t *testing.T) {
	t.Parallel()
	p := &observe.Processes{Err: "processes cannot be observed on this system"}
	if ps, err := p.Inside(t.TempDir()); err == nil {
		t.Errorf("Inside = %+v, nil; want an error", ps)
	}
	var none *observe.Processes
	if ps, err := none.Inside(t.TempDir()); err != nil || ps != nil {
		t.Errorf("nil Processes: Inside = %+v, %v; want nothing", ps, err)
	}
}

// TestInUseChildOfLookalikeName: ScanProcesses leaves out the children of
// custody processes (the git commands another custody runs). A user's
// program whose name merely starts with "custody" (a wrapper script
// "custody-agent" that starts an agent in the tree) is not custody: the
// agent it started uses the tree.
func TestInUseChildOfLookalikeName(t *testing.T) {
	t.Parallel()
	needProc(t)
	root := inuseRoot(t)
	tree := filepath.Join(root, "tree")
	if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(tree, 0o755); err != nil {
		t.Fatal(err)
	}
	shPath, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	b, err := os.ReadFile(shPath)
	if err != nil {
		t.Fatal(err)
	}
	wrapper := filepath.Join(root, "bin", "custody-agent")
	if err := os.WriteFile(wrapper, b, 0o755); err != nil {
		t.Fatal(err)
	}
	agent := spawnUserFrom(t, wrapper, tree, "sleep", sleeper)
	want := []machine.Process{{PID: agent, Command: "sleep", Via: "cwd"}}
	if d := cmp.Diff(want, inside(t, observe.ScanProcesses(), tree)); d != "" {
		t.Errorf("Inside(tree) (-want +got):\n%s", d)
	}
}
