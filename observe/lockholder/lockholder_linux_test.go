//go:build linux

package lockholder

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// TestHoldersFindsThisProcess: a flock this process takes on a file is
// found, with this process's command line; another file's is not.
func TestHoldersFindsThisProcess(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path, other := filepath.Join(dir, "state.db"), filepath.Join(dir, "other")
	for _, p := range []string{path, other} {
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Skipf("flock: %v", err)
	}
	got, err := Holders(path)
	if err != nil {
		t.Skipf("no lock table here: %v", err)
	}
	i := slices.IndexFunc(got, func(p Process) bool { return p.PID == os.Getpid() })
	if i < 0 {
		t.Fatalf("Holders(%s) = %+v, want this process (%d)", path, got, os.Getpid())
	}
	if !got[i].Write || len(got[i].Args) == 0 || got[i].Args[0] != os.Args[0] {
		t.Errorf("this process's lock: %+v", got[i])
	}
	if o, err := Holders(other); err != nil || len(o) != 0 {
		t.Errorf("Holders(%s) = %+v, %v; want none", other, o, err)
	}
}
