package agent

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
)

// pcHostileNames are names a printed command must carry as one word:
// shell syntax, quotes, a leading dash, a newline (git makes it '-' in the
// admin key, the path keeps it) and a byte that is not UTF-8. Each names a
// tree's directory (so git's admin key, an adopted tree's id) and a file
// in it; a name marked fileOnly names only the file.
var pcHostileNames = []struct {
	name     string
	fileOnly bool
}{
	{name: "semi;$(touch pwned)"},
	{name: "tick`touch pwned`"},
	{name: `quo'te"s`},
	{name: "-dash"},
	{name: "nl\nline $(touch pwned)"},
	// adopt does not find a tree whose path is not UTF-8 (a separate
	// matter), so this byte names the file only.
	{name: "bad\xffbyte;$(touch pwned)", fileOnly: true},
}

// pcWant is a command custody should print: the argv a paste must run.
type pcWant struct {
	argv []string
	// exact: the command is a whole line (after "to retry: " or a
	// retry field) and must run exactly argv; otherwise it stands in
	// prose, and the words after argv are the sentence's.
	exact bool
}

// pcFakeBin makes a directory holding fake custody and git that record
// each argv they are run with, one file per run, NUL-separated.
func pcFakeBin(t *testing.T) (bin, log string) {
	t.Helper()
	bin, log = t.TempDir(), t.TempDir()
	for _, name := range []string{"custody", "git"} {
		script := "#!/bin/sh\nf=$(mktemp \"$PC_LOG/run.XXXXXX\")\nprintf '%s\\0' " + name + " \"$@\" >\"$f\"\n"
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return bin, log
}

// pcPaste runs text through /bin/sh, in an empty directory, with the fake
// custody and git first on PATH, and returns every argv run; it fails the
// test when the paste made any file (a command it held ran).
func pcPaste(t *testing.T, text string) ([][]string, bool) {
	t.Helper()
	bin, log := pcFakeBin(t)
	dir := t.TempDir()
	var errb bytes.Buffer
	var err error
	for range 10 {
		cmd := exec.Command("/bin/sh", "-c", text)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "PC_LOG=" + log, "HOME=" + dir}
		errb.Reset()
		cmd.Stderr = &errb
		err = cmd.Run()
		// A fake just written may still be open for writing in a child
		// another test forked at that moment (until that child execs):
		// running it then fails with ETXTBSY, and ran nothing.
		if !strings.Contains(errb.String(), "Text file busy") {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("pasting %q ran more than it said: it made %s in the directory it ran in", text, ents[0].Name())
	}
	ents, _ := os.ReadDir(log)
	var runs [][]string
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(log, e.Name()))
		runs = append(runs, strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00"))
	}
	return runs, err == nil
}

// pcCheck finds every command of want in out, pastes each, and requires
// it to run want.argv (exactly, or as the start of the words run).
func pcCheck(t *testing.T, what, out string, want pcWant) {
	t.Helper()
	lead := want.argv[0] + " " + want.argv[1] + " "
	found := 0
	paste := func(text string) {
		found++
		runs, ok := pcPaste(t, text)
		// Prose after a command may close a parenthesis or a sentence.
		for cut := text; !ok && !want.exact && len(cut) > len(lead); {
			cut = cut[:len(cut)-1]
			runs, ok = pcPaste(t, cut)
		}
		if !slices.ContainsFunc(runs, func(run []string) bool {
			if want.exact {
				return slices.Equal(run, want.argv)
			}
			return len(run) >= len(want.argv) && slices.Equal(run[:len(want.argv)], want.argv)
		}) {
			t.Errorf("%s: pasting %q ran %q, want %q", what, text, runs, want.argv)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if want.exact {
			// A command's retry ends its "\tto retry: " line; a hook's one
			// line ends with it after "; next: ".
			text := strings.TrimPrefix(line, "\tto retry: ")
			if i := strings.LastIndex(text, "; next: "); i >= 0 {
				text = text[i+len("; next: "):]
			}
			if strings.HasPrefix(text, lead) {
				paste(text)
			}
			continue
		}
		for i := 0; ; {
			j := strings.Index(line[i:], lead)
			if j < 0 {
				break
			}
			paste(line[i+j:])
			i += j + len(lead)
		}
	}
	if found == 0 {
		t.Errorf("%s: the output names no %q command:\n%s", what, lead, out)
	}
}

// pcRecordOf returns the id custody gave the tree at path.
func pcRecordOf(t *testing.T, r *fixtures.Repo, path string) string {
	t.Helper()
	res := clitest.MustCustody(t, r, 0, "--json", "list", "--all")
	var env struct {
		Result struct {
			Records []struct{ ID, Path string }
		}
	}
	if err := json.Unmarshal([]byte(res.Stdout), &env); err != nil {
		t.Fatalf("list --json: %v\n%s", err, res)
	}
	for _, rec := range env.Result.Records {
		if rec.Path == path {
			return rec.ID
		}
	}
	t.Fatalf("no record of %q in\n%s", path, res.Stdout)
	return ""
}

// TestPrintedCommandsPasteExactly: a tree whose directory name holds shell
// syntax, quotes, a leading dash, a newline or a byte that is not UTF-8 is
// adopted (its id is git's admin key, which keeps most of them), and every
// command custody then prints about it — the next step of adopt, plan's
// retries, the lease hook's refusal in prose and in its retry, the stash
// advice for a file with such a name (the human plan's naming the tree
// from where custody ran) — pasted into /bin/sh runs exactly the argv it
// names and nothing else.
func TestPrintedCommandsPasteExactly(t *testing.T) {
	t.Parallel()
	for _, c := range pcHostileNames {
		name := c.name
		t.Run(strings.NewReplacer("/", "_", "\n", "_").Replace(name), func(t *testing.T) {
			t.Parallel()
			r := fixtures.New(t, fixtures.Options{})
			clitest.MustCustody(t, r, 0, "init")
			tree := name
			if c.fileOnly {
				tree = "plain"
			}
			path := filepath.Join(r.Root, "trees", tree)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			r.Git("worktree", "add", "-q", "-b", "work", "--", path)
			res := clitest.MustCustody(t, r, 0, "adopt", path)
			id := pcRecordOf(t, r, path)
			// An id that begins with "-" follows "--", or custody would
			// read it as a flag.
			ref := []string{id}
			if strings.HasPrefix(id, "-") {
				ref = []string{"--", id}
			}
			finish, reopen := append([]string{"custody", "finish"}, ref...), append([]string{"custody", "reopen"}, ref...)
			pcCheck(t, "adopt", res.Stdout, pcWant{argv: finish})

			clitest.MustCustody(t, r, 0, finish[1:]...)
			payload := hkPayload("UserPromptSubmit", "s1", path)
			res = hkRun(t, clitest.Bin(), r, r.Dir, payload, nil, "hook", "heartbeat")
			pcCheck(t, "heartbeat on a finished tree (prose)", res.Stderr, pcWant{argv: reopen})
			pcCheck(t, "heartbeat on a finished tree (retry)", res.Stderr, pcWant{argv: reopen, exact: true})

			file := strings.ReplaceAll("u "+name, "/", "_")
			r.WriteFile(path, file, "only here\n")
			want := pcWant{argv: []string{"git", "-C", path, "stash", "push", "--include-untracked", "--", file}, exact: true}
			// The human plan names the tree from where custody ran (the
			// main checkout): ../trees/NAME, as a paste there takes it.
			from, err := filepath.EvalSymlinks(r.Dir)
			if err != nil {
				t.Fatal(err)
			}
			rel, err := filepath.Rel(from, path)
			if err != nil {
				t.Fatal(err)
			}
			human := pcWant{argv: []string{"git", "-C", rel, "stash", "push", "--include-untracked", "--", file}, exact: true}
			res = clitest.MustCustody(t, r, 0, "plan")
			pcCheck(t, "plan of a tree with an untracked file", res.Stdout, human)
			res = clitest.MustCustody(t, r, 0, "--json", "plan")
			var plan struct {
				Result struct {
					Items []struct{ Refusal struct{ Retry string } }
				}
			}
			if err := json.Unmarshal([]byte(res.Stdout), &plan); err != nil || len(plan.Result.Items) != 1 {
				t.Fatalf("plan --json: %v\n%s", err, res)
			}
			pcCheck(t, "plan --json retry", plan.Result.Items[0].Refusal.Retry, want)
			// The argv the pasted retry ran is one custody takes.
			clitest.MustCustody(t, r, 0, reopen[1:]...)
		})
	}
}
