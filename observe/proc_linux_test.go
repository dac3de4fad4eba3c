package observe_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/observe/hostio"
)

func TestParseProcStatSelf(t *testing.T) {
	t.Parallel()
	needProc(t)
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	comm, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Fatal(err)
	}
	got, err := hostio.ParseProcStat(b)
	if err != nil {
		t.Fatalf("ParseProcStat(%q): %v", b, err)
	}
	// The state is the main thread's, which may sleep while another
	// thread reads: any live state, not Z.
	if !strings.ContainsRune("RSD", rune(got.State)) {
		t.Errorf("state %q of a live process in %q", got.State, b)
	}
	want := hostio.ProcStat{PID: os.Getpid(), PPID: os.Getppid(), Command: strings.TrimSuffix(string(comm), "\n"), Start: field22(t, b),
		State: got.State, Group: syscall.Getpgrp()}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if got.Start == 0 {
		t.Errorf("start time 0 in %q", b)
	}
}

// threadStat names a new thread of this process name and returns its id
// and the stat line the kernel prints for it. The thread dies with its
// locked goroutine, so no other test sees the name.
func threadStat(name string) (tid int, stat []byte, err error) {
	for try := 0; try < 20; try++ {
		done := make(chan struct{})
		onMain := false
		go func() {
			defer close(done)
			runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
			tid = syscall.Gettid()
			if tid == os.Getpid() {
				onMain = true // renaming the main thread renames the process
				runtime.UnlockOSThread()
				return
			}
			task := filepath.Join("/proc/self/task", strconv.Itoa(tid))
			if err = os.WriteFile(filepath.Join(task, "comm"), []byte(name), 0); err == nil {
				stat, err = os.ReadFile(filepath.Join(task, "stat"))
			}
		}()
		<-done
		if !onMain {
			return tid, stat, err
		}
	}
	return 0, nil, errors.New("every try ran on the main thread")
}

// TestParseProcStatAwkwardNames names threads of this process as the kernel
// allows (any bytes but NUL, at most 15) and parses the stat lines the
// kernel prints for them.
func TestParseProcStatAwkwardNames(t *testing.T) {
	t.Parallel()
	needProc(t)
	for _, name := range []string{"(a) b)", "x) S 1 2 (", "a\nb) ) (", " ", ")", "(("} {
		tid, stat, err := threadStat(name)
		if err != nil {
			t.Skipf("cannot rename a thread: %v", err)
		}
		got, err := hostio.ParseProcStat(stat)
		if err != nil {
			t.Errorf("%q: ParseProcStat(%q): %v", name, stat, err)
			continue
		}
		if got.PID != tid || got.PPID != os.Getppid() || got.Command != name || got.Start != field22(t, stat) {
			t.Errorf("%q: parsed %+v from %q", name, got, stat)
		}
	}
}
