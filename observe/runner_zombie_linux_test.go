package observe

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/custody-sh/custody/observe/hostio"
)

// TestRunDoneWhenOnlyZombiesAreLeft: a command leaves a process behind that
// exits soon after, and nobody collects it (here this process is a child
// subreaper and does not wait for it, as some containers' init is slow
// to). kill(-group, 0) still finds the zombie; Run is done once the
// leftover has exited, not at the end of a 30-second grace. It runs in a
// child test process, as a subreaper changes where every orphan of the
// process goes.
func TestRunDoneWhenOnlyZombiesAreLeft(t *testing.T) {
	if os.Getenv("CUSTODY_TEST_ZOMBIE_CHILD") == "1" {
		runLeavingAZombie(t)
		return
	}
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestRunDoneWhenOnlyZombiesAreLeft$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "CUSTODY_TEST_ZOMBIE_CHILD=1", "CUSTODY_TEST_ZOMBIE_DIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child test: %v\n%s", err, out)
	}
	var took time.Duration
	for _, l := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "zombie-test: took "); ok {
			took, err = time.ParseDuration(v)
			if err != nil {
				t.Fatalf("child said %q: %v", l, err)
			}
		}
	}
	if took == 0 {
		t.Fatalf("the child did not say how long Run took:\n%s", out)
	}
	if took > 15*time.Second {
		t.Errorf("Run took %s, waiting out its grace on a leftover that had exited\n%s", took, out)
	}
}

// runLeavingAZombie is the child's part: it makes this process a subreaper,
// runs a command whose background sleep outlives it briefly, and says how
// long Run took, after checking the sleep is a zombie of this process (or
// the test would prove nothing).
func runLeavingAZombie(t *testing.T) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Skipf("cannot become a child subreaper here: %v", err)
	}
	pidfile := filepath.Join(os.Getenv("CUSTODY_TEST_ZOMBIE_DIR"), "pid")
	r := &hostio.Runner{Grace: 30 * time.Second}
	start := time.Now()
	res, err := r.Run(context.Background(), withArg(sh(`sleep 0.3 </dev/null >/dev/null 2>&1 & echo $! > "$0"`), pidfile))
	took := time.Since(start)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	pid := readPid(t, mustRead(t, pidfile))
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatalf("the leftover %d is gone already (%v): nothing kept it a zombie", pid, err)
	}
	st, err := hostio.ParseProcStat(b)
	if err != nil {
		t.Fatal(err)
	}
	if st.State != 'Z' || st.PPID != os.Getpid() {
		t.Fatalf("the leftover is %+v, want a zombie whose parent is this process (%d)", st, os.Getpid())
	}
	var ws unix.WaitStatus
	_, _ = unix.Wait4(pid, &ws, 0, nil)
	fmt.Printf("zombie-test: took %s\n", took)
}
