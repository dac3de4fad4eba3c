package observe_test

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/custody-sh/custody/observe"
)

// TestProcScanUnknownRoot: a proc root that is empty (not mounted), that
// lists other processes but not custody's own (another pid namespace, or
// hidepid), whose self link names another pid (another namespace's
// numbering), or that is missing, is unknown: every tree is refused as in
// use, never reported as having nobody inside.
func TestProcScanUnknownRoot(t *testing.T) {
	t.Parallel()
	others := t.TempDir()
	// A process that is not us, holding a cwd elsewhere.
	p1 := filepath.Join(others, "1")
	if err := os.MkdirAll(p1, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p1, "stat"), statLine(1, "init", 0, 5), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/", filepath.Join(p1, "cwd")); err != nil {
		t.Fatal(err)
	}
	// Our pid present, but its stat unreadable as a stat line.
	garbled := t.TempDir()
	if err := os.MkdirAll(filepath.Join(garbled, strconv.Itoa(os.Getpid())), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(garbled, strconv.Itoa(os.Getpid()), "stat"), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(strconv.Itoa(os.Getpid()), filepath.Join(garbled, "self")); err != nil {
		t.Fatal(err)
	}
	// Our pid present and readable, but self names another process: a
	// listing numbered by another pid namespace.
	foreign := t.TempDir()
	if err := os.MkdirAll(filepath.Join(foreign, strconv.Itoa(os.Getpid())), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(foreign, strconv.Itoa(os.Getpid()), "stat"), statLine(os.Getpid(), "bash", 1, 5), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("1", filepath.Join(foreign, "self")); err != nil {
		t.Fatal(err)
	}
	for name, root := range map[string]string{
		"empty":        t.TempDir(),
		"without us":   others,
		"garbled stat": garbled,
		"missing":      filepath.Join(t.TempDir(), "proc"),
		"foreign self": foreign,
	} {
		t.Run(name, func(t *testing.T) {
			p := observe.ProcScanner{Root: root}.Scan()
			if p.Err == "" {
				t.Fatalf("Scan of a %s proc root: no Err", name)
			}
			if ps, err := p.Inside(t.TempDir()); err == nil {
				t.Fatalf("Inside = %+v, nil; want an error (unknown, never nobody)", ps)
			}
		})
	}
}

// TestProcScanFakeRoot: a proc root that lists custody's own process is
// read, and a process whose cwd, root, executable or open file is in the
// tree is found through the injected root.
func TestProcScanFakeRoot(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	tree := filepath.Join(t.TempDir(), "tree")
	add := func(pid, ppid int, comm string, links map[string]string) {
		dir := filepath.Join(root, strconv.Itoa(pid))
		if err := os.MkdirAll(filepath.Join(dir, "fd"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "stat"), statLine(pid, comm, ppid, 7), 0o644); err != nil {
			t.Fatal(err)
		}
		for name, target := range links {
			if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	self := os.Getpid()
	if err := os.Symlink(strconv.Itoa(self), filepath.Join(root, "self")); err != nil {
		t.Fatal(err)
	}
	add(self, 1, "custody", map[string]string{"cwd": tree})
	add(self+1, self, "git", map[string]string{"cwd": tree})
	add(self+2, 1, "vim", map[string]string{"cwd": "/", "fd/3": tree + "/main.go (deleted)"})
	add(self+3, 1, "sh", map[string]string{"cwd": tree + "-sibling"})
	p := observe.ProcScanner{Root: root}.Scan()
	if p.Err != "" {
		t.Fatal(p.Err)
	}
	got, err := p.Inside(tree)
	if err != nil {
		t.Fatal(err)
	}
	want := "vim open file 3"
	if len(got) != 1 || got[0].PID != self+2 || got[0].Command+" "+got[0].Via != want {
		t.Fatalf("Inside = %+v; want only process %d, %s", got, self+2, want)
	}
}
