package records

// A worktree's .env holds one line per value custody writes, whatever its
// id holds (decision 0229): adopted trees whose ids carry a quote, $,
// backticks, '#', '|', markup and a byte that is not UTF-8 get .env lines
// a shell reads back exactly, beside the person's own line, kept as it
// was; plan still knows custody's lines as its own.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
)

func TestDotenvOddIDs(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{Name: "r\x80\n'$x"})
	clitest.WriteTrusted(t, r, "[resources.db]\ncreate = 'true'\ndestroy = 'true'\n")
	clitest.MustCustody(t, r, 0, "init")

	adopt := func(base, branch string) (id, path string) {
		t.Helper()
		path = filepath.Join(r.Root, base)
		r.Git("worktree", "add", "-q", "-b", branch, path)
		clitest.MustCustody(t, r, 0, "adopt", path)
		for _, rec := range clitest.ListRecords(t, r, false) {
			if rec.Path == path {
				return rec.ID, path
			}
		}
		t.Fatalf("no record of the adopted tree %q", path)
		return "", ""
	}
	// mine: the person keeps a line of their own in .env; its id holds a
	// single quote, so its line is double-quoted.
	mineID, mine := adopt("it's$HOME`x`\x80", "mine")
	r.WriteFile(mine, ".env", "MINE='keep me'\n")
	// pushed: its id is single-quoted; its .env is custody's alone.
	pushedID, pushed := adopt("#c|<b>$(x)\x81", "pushed")
	r.Commit(pushed, "f.txt", "published\n")
	r.Push(pushed, "pushed")
	for _, id := range []string{mineID, pushedID} {
		if machine.DotenvValue(id) == id {
			t.Fatalf("the id %q needs no quoting: the test would test nothing", id)
		}
	}
	for range 2 { // ensuring again replaces custody's lines, never adds more
		clitest.MustCustody(t, r, 0, "resource", "ensure", mineID)
		clitest.MustCustody(t, r, 0, "resource", "ensure", pushedID)
	}

	for _, tc := range []struct {
		id, dir string
		want    map[string]string
	}{
		{mineID, mine, map[string]string{"MINE": "keep me"}},
		{pushedID, pushed, map[string]string{}},
	} {
		b, err := os.ReadFile(filepath.Join(tc.dir, ".env"))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		if n := 3 + len(tc.want); len(lines) != n {
			t.Errorf("%s's .env has %d lines, want %d (the person's, the id, the port, the resource):\n%s", tc.id, len(lines), n, b)
		}
		tc.want["CUSTODY_WORKTREE_ID"] = tc.id
		tc.want["CUSTODY_RESOURCE_DB"] = "" // a handle: any, but one
		tc.want["CUSTODY_PORT"] = ""
		for k, want := range tc.want {
			got := shRead(t, tc.dir, k)
			if want != "" && got != want || want == "" && got == "" {
				t.Errorf("%s's .env: sh reads %s as %q, want %q:\n%s", tc.id, k, got, want, b)
			}
		}
	}

	clitest.MustCustody(t, r, 0, "finish", mineID, pushedID)
	plan := clitest.PlanTo(t, r, filepath.Join(r.Root, "plan.json"), 0)
	for _, it := range plan.Items {
		if it.ID == pushedID && it.Action != machine.ActionRemove {
			t.Errorf("plan keeps %s, whose .env holds only custody's lines: %+v", it.ID, it.Refusal)
		}
		if it.ID == mineID && (it.Action != machine.ActionKeep || it.Refusal == nil || it.Refusal.Code != machine.CodeIgnoredFiles) {
			t.Errorf("plan does not keep %s, whose .env holds the person's line, for ignored-files: %s %+v", it.ID, it.Action, it.Refusal)
		}
	}
}

// shRead is variable k as a POSIX shell reads it by sourcing dir/.env.
func shRead(t *testing.T, dir, k string) string {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", `. ./.env && printf %s "$`+k+`"`)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sh sourcing %s/.env: %v", dir, err)
	}
	return string(out)
}
