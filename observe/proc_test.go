package observe_test

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/observe/hostio"
)

// statTail is what follows "<pid> (<comm>) " in a real /proc/<pid>/stat
// (Linux 6.x, 52 fields), with the parent pid and the start time (field 22)
// as verbs.
const statTail = "S %d 24923 6572 0 -1 4194304 102 0 0 0 0 0 0 0 20 0 1 0 %d 3133440 410 18446744073709551615 " +
	"94819999526912 94819999546793 140729144671200 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 94819999562800 " +
	"94819999564416 94820287291392 140729144679107 140729144679127 140729144679127 140729144680427 0\n"

func statLine(pid int, comm string, ppid int, start uint64) []byte {
	return []byte(fmt.Sprintf("%d (%s) "+statTail, pid, comm, ppid, start))
}

func TestParseProcStat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   []byte
		want hostio.ProcStat
	}{
		{"captured", []byte("24939 (cat) R 24923 24923 6572 0 -1 4194304 102 0 0 0 0 0 0 0 20 0 1 0 148166 3133440 410 18446744073709551615 " +
			"94819999526912 94819999546793 140729144671200 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 94819999562800 94819999564416 " +
			"94820287291392 140729144679107 140729144679127 140729144679127 140729144680427 0\n"),
			hostio.ProcStat{PID: 24939, PPID: 24923, Command: "cat", Start: 148166, State: 'R', Group: 24923}},
		{"parentheses in the name", statLine(7, "(a) b)", 1, 99), hostio.ProcStat{PID: 7, PPID: 1, Command: "(a) b)", Start: 99, State: 'S', Group: 24923}},
		{"a name that looks like fields", statLine(7, "x) S 1 2 3 (", 2, 5), hostio.ProcStat{PID: 7, PPID: 2, Command: "x) S 1 2 3 (", Start: 5, State: 'S', Group: 24923}},
		{"spaces and a newline in the name", statLine(8, " a b\nc ", 3, 0), hostio.ProcStat{PID: 8, PPID: 3, Command: " a b\nc ", Start: 0, State: 'S', Group: 24923}},
		{"empty name", statLine(9, "", 0, 1), hostio.ProcStat{PID: 9, PPID: 0, Command: "", Start: 1, State: 'S', Group: 24923}},
		{"largest start time", statLine(10, "kworker/0:1", 2, 1<<64-1), hostio.ProcStat{PID: 10, PPID: 2, Command: "kworker/0:1", Start: 1<<64 - 1, State: 'S', Group: 24923}},
		{"exactly 20 fields after the name", []byte("11 (short) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 77"),
			hostio.ProcStat{PID: 11, PPID: 1, Command: "short", Start: 77, State: 'S', Group: 1}},
	}
	for _, tc := range tests {
		got, err := hostio.ParseProcStat(tc.in)
		if err != nil {
			t.Errorf("%s: ParseProcStat: %v", tc.name, err)
			continue
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%s: (-want +got):\n%s", tc.name, d)
		}
	}
}

func TestParseProcStatMalformed(t *testing.T) {
	t.Parallel()
	good := string(statLine(7, "sleep", 1, 99))
	tests := []struct {
		name string
		in   string
	}{
		{"empty", ""},
		{"no name", "7 S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 77"},
		{"no pid", "(sleep) " + fmt.Sprintf(statTail, 1, 99)},
		{"pid zero", "0 (sleep) " + fmt.Sprintf(statTail, 1, 99)},
		{"pid negative", "-7 (sleep) " + fmt.Sprintf(statTail, 1, 99)},
		{"pid not a number", "x (sleep) " + fmt.Sprintf(statTail, 1, 99)},
		{"no closing parenthesis", "7 (sleep S 1"},
		{"closing before opening", "7 )sleep( " + fmt.Sprintf(statTail, 1, 99)},
		{"truncated after the name", "7 (sleep) S 1 1"},
		{"truncated before the start time", good[:strings.Index(good, " 99 ")]},
		{"19 fields after the name", "11 (short) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0"},
		{"start time not a number", strings.Replace(good, " 99 ", " x ", 1)},
		{"start time negative", strings.Replace(good, " 99 ", " -99 ", 1)},
		{"start time too large", strings.Replace(good, " 99 ", " 18446744073709551616 ", 1)},
		{"parent pid not a number", strings.Replace(good, "(sleep) S 1 ", "(sleep) S x ", 1)},
		{"process group not a number", strings.Replace(good, "(sleep) S 1 24923 ", "(sleep) S 1 x ", 1)},
		{"state of two letters", strings.Replace(good, "(sleep) S ", "(sleep) SZ ", 1)},
	}
	for _, tc := range tests {
		got, err := hostio.ParseProcStat([]byte(tc.in))
		if !errors.Is(err, hostio.ErrMalformed) {
			t.Errorf("%s: err = %v, want ErrMalformed (parsed %+v)", tc.name, err, got)
		}
		if got != (hostio.ProcStat{}) {
			t.Errorf("%s: parsed %+v with an error", tc.name, got)
		}
	}
}

// field22 reads the start time of a stat line the simplest way, for
// comparison.
func field22(t *testing.T, b []byte) uint64 {
	t.Helper()
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	v, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func FuzzParseProcStat(f *testing.F) {
	f.Add(statLine(7, "sleep", 1, 99), "(a) b)", uint64(99))
	f.Add([]byte("7 (a) b) S 1"), "", uint64(0))
	f.Add([]byte("(x) "+fmt.Sprintf(statTail, 1, 2)), "x) S 1 2 (", uint64(1<<64-1))
	f.Add([]byte("+7 ((() "+fmt.Sprintf(statTail, 1, 2)), "\n", uint64(5))
	f.Fuzz(func(t *testing.T, b []byte, comm string, start uint64) {
		// Any input: no panic, and either ErrMalformed or a parse that
		// agrees with the format.
		got, err := hostio.ParseProcStat(b)
		if err != nil {
			if !errors.Is(err, hostio.ErrMalformed) {
				t.Fatalf("error does not wrap ErrMalformed: %v", err)
			}
			if got != (hostio.ProcStat{}) {
				t.Fatalf("parsed %+v with an error", got)
			}
		} else {
			open, closing := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
			if open < 0 || closing < open {
				t.Fatalf("parsed %+v from %q, which has no (name)", got, b)
			}
			if got.Command != string(b[open+1:closing]) {
				t.Fatalf("command %q, want the bytes between the first ( and the last ): %q", got.Command, b[open+1:closing])
			}
			if got.PID <= 0 {
				t.Fatalf("pid %d", got.PID)
			}
			if got.Start != field22(t, b) {
				t.Fatalf("start %d, field 22 is %d", got.Start, field22(t, b))
			}
		}
		// A line as the kernel prints it: whatever the name, it parses back.
		if strings.ContainsRune(comm, 0) {
			return
		}
		line := statLine(4242, comm, 17, start)
		got, err = hostio.ParseProcStat(line)
		want := hostio.ProcStat{PID: 4242, PPID: 17, Command: comm, Start: start, State: 'S', Group: 24923}
		if err != nil || got != want {
			t.Fatalf("ParseProcStat(%q) = %+v, %v; want %+v", line, got, err, want)
		}
	})
}
