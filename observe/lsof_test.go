package observe_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/hostio"
)

// lsofSet renders one set as `lsof -F...0` prints it: each field an
// identifier and its data, NUL-terminated, the set ended by a newline.
func lsofSet(fields ...string) string {
	return strings.Join(fields, "\x00") + "\x00\n"
}

// lsofSample is shaped like the field output lsof's manual describes for
// a shell in a project, its editor, and a daemon with a socket, with the
// descriptor names lsof uses on darwin (cwd, txt, numbered descriptors)
// and on Linux (rtd, mem).
var lsofSample = lsofSet("p1", "R0", "claunchd") +
	lsofSet("fcwd", "tDIR", "n/") +
	lsofSet("ftxt", "tREG", "n/sbin/launchd") +
	lsofSet("p4242", "R1", "czsh") +
	lsofSet("fcwd", "tDIR", "n/Users/ann/src/app/.worktrees/fix-1a2b3c") +
	lsofSet("ftxt", "tREG", "n/bin/zsh") +
	lsofSet("ftxt", "tREG", "n/usr/lib/dyld") +
	lsofSet("f0", "tCHR", "n/dev/ttys001") +
	lsofSet("p4300", "R4242", "cvim") +
	lsofSet("fcwd", "tDIR", "n/Users/ann") +
	lsofSet("frtd", "tDIR", "n/") +
	lsofSet("fmem", "tREG", "n/Users/ann/src/app/.worktrees/fix-1a2b3c/lib.so (deleted)") +
	lsofSet("f5", "tREG", "n/Users/ann/src/app/.worktrees/fix-1a2b3c/main.go") +
	lsofSet("p501", "R1", "cnode") +
	lsofSet("fcwd", "tDIR", "n/tmp") +
	lsofSet("f12", "tunix", "n->0x1f2e3d4c5b6a7980") +
	lsofSet("f13", "tIPv4", "n127.0.0.1:3000") +
	lsofSet("f14", "tPIPE") +
	lsofSet("p777", "cno files")

func TestParseLsof(t *testing.T) {
	got, err := observe.ParseLsof([]byte(lsofSample))
	if err != nil {
		t.Fatal(err)
	}
	want := []observe.LsofProcess{
		{PID: 1, PPID: 0, Command: "launchd", Files: []observe.LsofFile{
			{FD: "cwd", Type: "DIR", Name: "/"},
			{FD: "txt", Type: "REG", Name: "/sbin/launchd"},
		}},
		{PID: 4242, PPID: 1, Command: "zsh", Files: []observe.LsofFile{
			{FD: "cwd", Type: "DIR", Name: "/Users/ann/src/app/.worktrees/fix-1a2b3c"},
			{FD: "txt", Type: "REG", Name: "/bin/zsh"},
			{FD: "txt", Type: "REG", Name: "/usr/lib/dyld"},
			{FD: "0", Type: "CHR", Name: "/dev/ttys001"},
		}},
		{PID: 4300, PPID: 4242, Command: "vim", Files: []observe.LsofFile{
			{FD: "cwd", Type: "DIR", Name: "/Users/ann"},
			{FD: "rtd", Type: "DIR", Name: "/"},
			{FD: "mem", Type: "REG", Name: "/Users/ann/src/app/.worktrees/fix-1a2b3c/lib.so (deleted)"},
			{FD: "5", Type: "REG", Name: "/Users/ann/src/app/.worktrees/fix-1a2b3c/main.go"},
		}},
		{PID: 501, PPID: 1, Command: "node", Files: []observe.LsofFile{
			{FD: "cwd", Type: "DIR", Name: "/tmp"},
			{FD: "12", Type: "unix", Name: "->0x1f2e3d4c5b6a7980"},
			{FD: "13", Type: "IPv4", Name: "127.0.0.1:3000"},
			{FD: "14", Type: "PIPE"},
		}},
		{PID: 777, Command: "no files"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("ParseLsof (-want +got):\n%s", d)
	}
}

// TestParseLsofTasks: Linux's lsof lists each thread of a process as a
// process set of its own; they are one process holding every file listed.
func TestParseLsofTasks(t *testing.T) {
	in := lsofSet("p9", "R1", "cgo") + lsofSet("fcwd", "n/a") +
		lsofSet("p10", "R1", "csh") + lsofSet("fcwd", "n/c") +
		lsofSet("p9", "R1", "cgo") + lsofSet("f3", "n/b")
	got, err := observe.ParseLsof([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []observe.LsofProcess{
		{PID: 9, PPID: 1, Command: "go", Files: []observe.LsofFile{{FD: "cwd", Name: "/a"}, {FD: "3", Name: "/b"}}},
		{PID: 10, PPID: 1, Command: "sh", Files: []observe.LsofFile{{FD: "cwd", Name: "/c"}}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("ParseLsof (-want +got):\n%s", d)
	}
}

func TestParseLsofEmpty(t *testing.T) {
	got, err := observe.ParseLsof(nil)
	if err != nil || len(got) != 0 {
		t.Fatalf("ParseLsof(nil) = %v, %v; want nothing, no error", got, err)
	}
}

func TestParseLsofMalformed(t *testing.T) {
	for name, in := range map[string]string{
		"file before process":   lsofSet("fcwd", "n/"),
		"cut short":             lsofSet("p1", "cinit") + "fcwd\x00n/",
		"cut inside a field":    "p1\x00cini",
		"newline terminators":   "p1\ncinit\nfcwd\nn/\n",
		"empty set":             lsofSet("p1") + "\n",
		"no identifier":         "p1\x00\x00\n",
		"unknown set":           lsofSet("x1"),
		"unknown process field": lsofSet("p1", "u501"),
		"unknown file field":    lsofSet("p1") + lsofSet("fcwd", "i1234"),
		"pid twice in a set":    lsofSet("p1", "p2"),
		"name twice":            lsofSet("p1") + lsofSet("f3", "n/a", "n/b"),
		"process listed twice":  lsofSet("p1", "R0", "cinit") + lsofSet("p1", "R0", "cother"),
		"another parent":        lsofSet("p2", "R1") + lsofSet("p2", "R3"),
		"pid zero":              lsofSet("p0"),
		"negative pid":          lsofSet("p-1"),
		"signed pid":            lsofSet("p+1"),
		"empty pid":             lsofSet("p"),
		"huge pid":              lsofSet("p99999999999"),
		"pid with space":        lsofSet("p 1"),
		"bad parent":            lsofSet("p2", "Rx"),
		"empty descriptor":      lsofSet("p1") + lsofSet("f", "n/"),
		"p not first":           lsofSet("cinit", "p1"),
	} {
		t.Run(name, func(t *testing.T) {
			got, err := observe.ParseLsof([]byte(in))
			if !errors.Is(err, hostio.ErrMalformed) {
				t.Fatalf("ParseLsof(%q) = %v, %v; want ErrMalformed", in, got, err)
			}
			if got != nil {
				t.Fatalf("ParseLsof(%q) returned %v with its error", in, got)
			}
		})
	}
}

// TestLsofScanMissing: without lsof, who uses a tree is unknown (the error
// names lsof and how to get on), never nobody.
func TestLsofScanMissing(t *testing.T) {
	p := observe.LsofScanner{Program: "/nonexistent/lsof"}.Scan(context.Background())
	if p.Err == "" || !strings.Contains(p.Err, "lsof") || !strings.Contains(p.Err, "install lsof") {
		t.Fatalf("Err = %q, want one naming the missing lsof", p.Err)
	}
	if _, err := p.Inside("/"); err == nil {
		t.Fatal("Inside found nobody in / without lsof; want an error")
	}
}

// TestLsofScanFails: an lsof that exits non-zero, or prints what the
// parser refuses, or leaves out custody's own process, is unknown.
func TestLsofScanFails(t *testing.T) {
	dir := t.TempDir()
	for name, script := range map[string]string{
		"exits non-zero": "echo 'lsof: no kernel' >&2; exit 1",
		"unreadable":     "printf 'p1\\ncinit\\n'",
		"without us":     "printf 'p1\\000cinit\\000\\n'",
		"nothing":        "exit 0",
	} {
		t.Run(name, func(t *testing.T) {
			prog := writeScript(t, dir, strings.ReplaceAll(name, " ", "-"), script)
			p := observe.LsofScanner{Program: prog}.Scan(context.Background())
			if p.Err == "" {
				t.Fatalf("Err is empty for an lsof that %s", name)
			}
			if ps, err := p.Inside("/"); err == nil {
				t.Fatalf("Inside = %v, nil; want an error", ps)
			}
		})
	}
}

// writeScript writes an executable shell script named name into dir.
func writeScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := dir + "/" + name
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func FuzzParseLsof(f *testing.F) {
	f.Add([]byte(lsofSample), uint32(4242), "zsh", "cwd", "/Users/ann/tree")
	f.Add([]byte(lsofSet("p1")), uint32(1), "", "3", "")
	f.Add([]byte("p1\x00\n\n"), uint32(0), "a\x00b", "txt", "x\ny")
	f.Add([]byte(lsofSet("p1")+lsofSet("f3", "t", "n")), uint32(1<<31), "c", "", "/")
	f.Fuzz(func(t *testing.T, b []byte, pid uint32, comm, fd, name string) {
		// Any input: no panic, and either ErrMalformed with nothing, or
		// sets that agree with the format.
		got, err := observe.ParseLsof(b)
		if err != nil {
			if !errors.Is(err, hostio.ErrMalformed) || got != nil {
				t.Fatalf("ParseLsof = %v, %v; want nil and ErrMalformed", got, err)
			}
		} else {
			sets, seen := 0, map[int]bool{}
			for _, p := range got {
				if p.PID <= 0 || seen[p.PID] {
					t.Fatalf("pid %d parsed from %q", p.PID, b)
				}
				seen[p.PID] = true
				sets += len(p.Files)
				for _, f := range p.Files {
					if f.FD == "" {
						t.Fatalf("empty descriptor parsed from %q", b)
					}
				}
			}
			// Every set is one newline: one per file, at least one per
			// process (a thread's listing repeats it).
			if nl := bytes.Count(b, []byte{'\n'}); nl-sets < len(got) || nl-sets != bytes.Count(b, []byte("\np"))+boolInt(bytes.HasPrefix(b, []byte("p"))) {
				t.Fatalf("%d processes, %d files from %d newlines in %q", len(got), sets, nl, b)
			}
		}
		// Output as lsof prints it parses back to what it says.
		if pid == 0 || pid > 1<<31-1 || fd == "" || strings.ContainsAny(comm+fd+name, "\x00\n") {
			return
		}
		in := lsofSet(fmt.Sprint("p", pid), "R1", "c"+comm) + lsofSet("f"+fd, "tREG", "n"+name)
		want := []observe.LsofProcess{{PID: int(pid), PPID: 1, Command: comm, Files: []observe.LsofFile{{FD: fd, Type: "REG", Name: name}}}}
		got, err = observe.ParseLsof([]byte(in))
		if err != nil {
			t.Fatalf("ParseLsof(%q): %v", in, err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("ParseLsof(%q) (-want +got):\n%s", in, d)
		}
	})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
