package records

// Redaction when the home directory and the repository root are named
// with a newline, bytes that are not UTF-8 and JSON's and HTML's special
// characters: the redacted export, and the redacted report, hold neither
// in any spelling; the export verifies by content with nothing given back
// (each path is committed, decision 0252).

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
	"github.com/custody-sh/custody/steps/report"
	"github.com/custody-sh/custody/store"
)

func TestRedactOddHomeAndRoot(t *testing.T) {
	t.Parallel()
	const homeName, repoName = "h\x80 <i>&\"|\nome", "re$po\x81\n|*\\"
	r := fixtures.New(t, fixtures.Options{Name: filepath.Join(homeName, repoName)})
	r.Home = filepath.Join(r.Root, homeName)
	clitest.MustCustody(t, r, 0, "init")

	pushedID, pushed := clitest.NewTree(t, r, "pushed")
	r.Commit(pushed, "f.txt", "published\n")
	r.Push(pushed, "pushed")
	archID, arch := clitest.NewTree(t, r, "archived")
	r.WriteFile(arch, "only-here.txt", "unpublished\n")
	clitest.MustCustody(t, r, 0, "finish", pushedID)
	clitest.MustCustody(t, r, 0, "finish", "--archive", archID)
	planFile := filepath.Join(r.Root, "plan.json")
	clitest.MustCustody(t, r, 0, "plan", "-o", planFile)
	clitest.MustCustody(t, r, 0, "apply", planFile)

	// Every spelling of the two names custody could write: as they are,
	// as JSON writes them, escaped for display, and Go-quoted.
	spellings := func(name string) []string {
		b, err := json.Marshal(name)
		if err != nil {
			t.Fatal(err)
		}
		q := strconv.Quote(name)
		return []string{name, string(b[1 : len(b)-1]), machine.EscapeControl(name), machine.ShowName(name), q[1 : len(q)-1]}
	}
	hidden := func(what, text string) {
		t.Helper()
		for _, name := range []string{homeName, repoName} {
			for _, s := range spellings(name) {
				if strings.Contains(text, s) {
					t.Errorf("the redacted %s holds %q (a spelling of %q)", what, s, name)
				}
			}
		}
	}

	full := filepath.Join(r.Root, "full.jsonl")
	clitest.MustCustody(t, r, 0, "journal", "export", "-o", full)
	if b, _ := os.ReadFile(full); !strings.Contains(string(b), spellings(repoName)[1]) {
		t.Fatalf("the full export does not name the repository: the redaction check would test nothing")
	}
	exp := filepath.Join(r.Root, "redacted.jsonl")
	clitest.MustCustody(t, r, 0, "journal", "export", "--redact", "-o", exp)
	b, err := os.ReadFile(exp)
	if err != nil {
		t.Fatal(err)
	}
	hidden("export", string(b))
	// Each path is replaced by its commitment, by structure.
	if !strings.Contains(string(b), `"redacted":"path"`) {
		t.Errorf("the redacted export replaced no path")
	}

	host, _ := os.Hostname()
	verify := func(want int, extra ...string) store.VerifyReport {
		t.Helper()
		res := clitest.MustCustody(t, r, want, append(append([]string{"--json", "journal", "verify", "--redacted"}, extra...), exp)...)
		if want != 0 {
			return store.VerifyReport{}
		}
		return clitest.DecodeResult[store.VerifyReport](t, res, "journal verify")
	}
	// No value needs to be given back: every redacted entry is checked
	// by content (decision 0252); the old flags change nothing.
	byContent := verify(0)
	if byContent.Redacted == 0 || byContent.ContentChecked != byContent.Redacted || byContent.ContentFrom != 1 {
		t.Errorf("verify --redacted: %+v, want every redacted entry checked by content from seq 1", byContent)
	}
	rep := verify(0, "--home", r.Home, "--root", r.Dir, "--host", host)
	if rep.ContentChecked != rep.Redacted {
		t.Errorf("verify with the home, root and host given back: %+v, want every redacted entry checked by content", rep)
	}

	for _, format := range []string{"html", "md"} {
		out := filepath.Join(r.Root, "report."+format)
		clitest.MustCustody(t, r, 0, "journal", "report", "--redact", "--format", format, "-o", out)
		page, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		hidden(format+" report", string(page))
		res := clitest.DecodeResult[report.ReportResult](t, clitest.MustCustody(t, r, 0, "--json", "journal", "report", "--format", format, "-o", out,
			"--home", r.Home, "--root", r.Dir, "--host", host, exp), "journal report")
		if v := res.Verification; !v.ChainVerified || v.Redacted == 0 || v.ContentChecked != v.Redacted {
			t.Errorf("report of the redacted export with the values given back: %+v", v)
		}
	}
}
