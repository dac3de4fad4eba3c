package machine_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-sh/custody/machine"
	"github.com/google/go-cmp/cmp"
)

func TestDotenvLines(t *testing.T) {
	t.Parallel()
	rs := []machine.Resource{
		{Worktree: "fix-0a0b0c", Name: "db", Handle: "shop-fix-0a0b0c-db"},
		{Worktree: "other-111111", Name: "db", Handle: "shop-other-111111-db"},
		{Worktree: "fix-0a0b0c", Name: "dev-server", Handle: "shop-fix-0a0b0c-dev-server"},
	}
	cases := []struct {
		name string
		rec  machine.Record
		want []string
	}{
		{"port and handles", machine.Record{ID: "fix-0a0b0c", Port: 21234},
			[]string{"CUSTODY_WORKTREE_ID=fix-0a0b0c", "CUSTODY_PORT=21234", "CUSTODY_RESOURCE_DB=shop-fix-0a0b0c-db", "CUSTODY_RESOURCE_DEV_SERVER=shop-fix-0a0b0c-dev-server"}},
		{"no port (an adopted tree)", machine.Record{ID: "fix-0a0b0c"},
			[]string{"CUSTODY_WORKTREE_ID=fix-0a0b0c", "CUSTODY_RESOURCE_DB=shop-fix-0a0b0c-db", "CUSTODY_RESOURCE_DEV_SERVER=shop-fix-0a0b0c-dev-server"}},
		{"no resources", machine.Record{ID: "new-222222", Port: 20001},
			[]string{"CUSTODY_WORKTREE_ID=new-222222", "CUSTODY_PORT=20001"}},
	}
	for _, c := range cases {
		if d := cmp.Diff(c.want, machine.DotenvLines(c.rec, rs)); d != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, d)
		}
	}
}

func TestDotenvValue(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]string{
		"fix-0a0b0c":       "fix-0a0b0c",
		"21234":            "21234",
		"a,b:c/d@e%f+g=h_": "a,b:c/d@e%f+g=h_",
		"w|<b>\x81-#-h":    "'w|<b>\x81-#-h'",
		"a$b `c` \"d\"":    "'a$b `c` \"d\"'",
		"":                 "''",
		"it's":             `"it's"`,
		"x\ny=z":           `"x\ny=z"`,
		"q'\\$`\"\r":       `"q'\\\$` + "\\`" + `\"\r"`,
	} {
		if got := machine.DotenvValue(v); got != want {
			t.Errorf("DotenvValue(%q) = %s, want %s", v, got, want)
		}
	}
}

// TestDotenvValueReadsBack: a POSIX shell sourcing .env lines written
// with DotenvValue gets back every value exactly, each on its one line,
// for random values of every byte but NUL (which no variable can hold); a
// line break, which a shell cannot read from one line, reads as its
// escape, and never ends the line.
func TestDotenvValueReadsBack(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(229, 3))
	special := []byte("'\"$`\\\n\r#;|&<> =\x80\xff")
	var file strings.Builder
	var names, values []string
	for i := range 300 {
		b := make([]byte, r.IntN(10))
		for j := range b {
			if r.IntN(2) == 0 {
				b[j] = special[r.IntN(len(special))]
			} else {
				b[j] = byte(1 + r.IntN(255))
			}
		}
		name := fmt.Sprintf("CUSTODY_V%d", i)
		line := name + "=" + machine.DotenvValue(string(b))
		if strings.Count(line, "\n") != 0 {
			t.Fatalf("DotenvValue(%q) spans lines: %q", b, line)
		}
		file.WriteString(line + "\n")
		names, values = append(names, name), append(values, string(b))
	}
	env := filepath.Join(t.TempDir(), ".env")
	if err := os.WriteFile(env, []byte(file.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	script := ". " + env + "; printf '%s\\0'"
	for _, n := range names {
		script += ` "$` + n + `"`
	}
	out, err := exec.Command("/bin/sh", "-c", script).Output()
	if err != nil {
		t.Fatalf("sh sourcing the .env: %v", err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if len(got) != len(values) {
		t.Fatalf("sh read %d values, want %d", len(got), len(values))
	}
	for i := range values {
		want := values[i]
		if strings.ContainsAny(want, "\n\r") {
			want = strings.NewReplacer("\n", `\n`, "\r", `\r`).Replace(want)
		}
		if got[i] != want {
			t.Errorf("%s: wrote %q as %s, sh read %q, want %q", names[i], values[i], machine.DotenvValue(values[i]), got[i], want)
		}
	}
}
