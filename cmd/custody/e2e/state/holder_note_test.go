package state

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
)

// TestHolderNoteOneLine: the note a writer leaves beside the state file
// (who last took its lock, named by a later lock timeout) is one line when
// the command's arguments hold a newline and bytes that are not UTF-8: the
// repository path given with -C is shown escaped, whole.
func TestHolderNoteOneLine(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{Name: "r\nx\x80 y"})
	clitest.RunBin(t, clitest.Bin(), r, r.Root, nil, "-C", r.Dir, "init")
	if res := clitest.RunBin(t, clitest.Bin(), r, r.Root, nil, "-C", r.Dir, "new", "t"); res.Code != 0 {
		t.Fatalf("custody -C %q new t:\n%s", r.Dir, res)
	}
	b, err := os.ReadFile(filepath.Join(r.Dir, ".git", "custody", "state.db.holder"))
	if err != nil {
		t.Fatal(err)
	}
	note := string(b)
	if strings.Count(note, "\n") != 1 || !strings.HasSuffix(note, "\n") || !strings.HasPrefix(note, "pid ") || !strings.Contains(note, " since ") {
		t.Errorf("the holder note is not one line: %q", note)
	}
	if want := " -C " + machine.ShowName(r.Dir) + " new t)"; !strings.Contains(note, want) {
		t.Errorf("the holder note %q does not show the command's arguments as %q", note, want)
	}
}
