package observe

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
)

func TestLsofUses(t *testing.T) {
	const self, exe = 100, "/usr/local/bin/custody"
	tree := "/Users/ann/src/app/.worktrees/fix-1a2b3c"
	procs := []LsofProcess{
		{PID: self, PPID: 1, Command: "custody", Files: []LsofFile{{FD: "cwd", Name: tree}, {FD: "txt", Name: exe}}},
		{PID: 101, PPID: self, Command: "git", Files: []LsofFile{{FD: "cwd", Name: tree}}},
		{PID: 102, PPID: 1, Command: "custody", Files: []LsofFile{{FD: "txt", Name: exe}, {FD: "cwd", Name: tree}}},
		{PID: 103, PPID: 102, Command: "git", Files: []LsofFile{{FD: "cwd", Name: tree}}},
		{PID: 200, PPID: 1, Command: "zsh", Files: []LsofFile{{FD: "cwd", Name: tree + "/src"}, {FD: "txt", Name: "/bin/zsh"}}},
		{PID: 201, PPID: 200, Command: "vim", Files: []LsofFile{
			{FD: "cwd", Name: "/Users/ann"},
			{FD: "txt", Name: "/usr/bin/vim"},
			{FD: "txt", Name: tree + "/lib/libx.dylib"},
		}},
		{PID: 202, PPID: 1, Command: "cat", Files: []LsofFile{{FD: "rtd", Name: tree}}},
		{PID: 203, PPID: 1, Command: "tail", Files: []LsofFile{{FD: "4", Name: tree + "/log.txt (deleted)"}}},
		{PID: 204, PPID: 1, Command: "python", Files: []LsofFile{{FD: "mem", Name: tree + "/x.so"}}},
		{PID: 205, PPID: 1, Command: "prog", Files: []LsofFile{{FD: "txt", Name: tree + "/bin/prog"}}},
		{PID: 206, PPID: 1, Command: "odd", Files: []LsofFile{{FD: "jld", Name: tree + "/j"}}},
		{PID: 300, PPID: 1, Command: "node", Files: []LsofFile{{FD: "7", Name: "->0x1f2e"}, {FD: "8", Name: "127.0.0.1:3000"}}},
		{PID: 301, PPID: 1, Command: "near", Files: []LsofFile{{FD: "cwd", Name: tree + "-other"}}},
	}
	p := lsofUses(procs, self, exe)
	if p.Err != "" {
		t.Fatal(p.Err)
	}
	got, err := p.Inside(tree)
	if err != nil {
		t.Fatal(err)
	}
	want := []machine.Process{
		{PID: 200, Command: "zsh", Via: "cwd"},
		{PID: 201, Command: "vim", Via: "program text"},
		{PID: 202, Command: "cat", Via: "root"},
		{PID: 203, Command: "tail", Via: "open file 4"},
		{PID: 204, Command: "python", Via: "mapped file"},
		{PID: 205, Command: "prog", Via: "exe"},
		{PID: 206, Command: "odd", Via: "file jld"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("Inside (-want +got):\n%s", d)
	}
}

// TestLsofUsesWithoutSelf: a listing that leaves out custody's own process
// (lsof could not see it, or it is another system's) is unknown.
func TestLsofUsesWithoutSelf(t *testing.T) {
	p := lsofUses([]LsofProcess{{PID: 1, Command: "init"}}, 100, "/bin/custody")
	if p.Err == "" {
		t.Fatal("a listing without custody's own process was taken as whole")
	}
	if _, err := p.Inside("/"); err == nil {
		t.Fatal("Inside found nobody; want an error")
	}
}
