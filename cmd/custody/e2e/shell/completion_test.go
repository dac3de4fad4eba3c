//go:build unix

package shell

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/google/go-cmp/cmp"
)

// compWorld is a repository whose path holds oddName, with two trees
// (ids fix, other), a branch of its own, and an archive of one tree.
type compWorld struct {
	r          *fixtures.Repo
	fix, other string
	archive    string
	script     map[string]string
}

// newCompWorld makes the world and writes each shell's completion script
// into it.
func newCompWorld(t *testing.T) compWorld {
	t.Helper()
	r := clitest.InitSpacedRepo(t, fixtures.Options{Name: oddName})
	w := compWorld{r: r, script: map[string]string{}}
	w.fix, _ = clitest.NewTree(t, r, "fix one")
	w.other, _ = clitest.NewTree(t, r, "other")
	r.Git("branch", "feature/x")
	w.archive = clitest.CreateArchive(t, r, w.other).ID
	dir := t.TempDir()
	for _, shell := range []string{"bash", "zsh", "fish"} {
		out, err := exec.Command(clitest.Bin(), "completion", shell).Output()
		if err != nil {
			t.Fatalf("custody completion %s: %v", shell, err)
		}
		p := filepath.Join(dir, "custody."+shell)
		if err := os.WriteFile(p, out, 0o644); err != nil {
			t.Fatal(err)
		}
		w.script[shell] = p
	}
	return w
}

// compCase is a command line (its words; the last is the one completed),
// where completion runs ("" the main checkout) and what it must offer.
type compCase struct {
	words []string
	dir   string
	want  []string
}

func (w compWorld) cases(t *testing.T) []compCase {
	branches := []string{"custody/" + w.fix, "custody/" + w.other, "feature/x", "main"}
	trees := []string{w.fix, w.other}
	slices.Sort(trees)
	outside := t.TempDir()
	return []compCase{
		{words: []string{"custody", "switch", ""}, want: trees},
		{words: []string{"custody", "switch", "fix"}, want: []string{w.fix}},
		{words: []string{"custody", "path", "oth"}, want: []string{w.other}},
		{words: []string{"custody", "show", "nomatch"}, want: nil},
		{words: []string{"custody", "finish", w.fix, ""}, want: trees}, // a repeated argument
		{words: []string{"custody", "remove", "--archive", ""}, want: trees},
		{words: []string{"custody", "--json", "reopen", "ot"}, want: []string{w.other}},
		{words: []string{"custody", "apply", "p.json", "--only", "f"}, want: []string{w.fix}},
		{words: []string{"custody", "journal", "export", "--record", ""}, want: trees},
		{words: []string{"custody", "new", "x", "--from", ""}, want: branches},
		{words: []string{"custody", "new", "x", "--from", "fe"}, want: []string{"feature/x"}},
		{words: []string{"custody", "archive", "verify", ""}, want: []string{w.archive}},
		{words: []string{"custody", "archive", "prune", "--apply", ""}, want: []string{w.archive}},
		// -C names the repository from elsewhere, its path passed whole
		{words: []string{"custody", "-C", w.r.Dir, "switch", ""}, dir: outside, want: trees},
		// outside any repository there is nothing to offer, and nothing is said
		{words: []string{"custody", "switch", ""}, dir: outside, want: nil},
	}
}

// TestBashCompletesWords runs the bash script's completion function as
// bash's programmable completion does (COMP_WORDS, COMP_CWORD), which asks
// the binary for tree ids, branches and archive names.
func TestBashCompletesWords(t *testing.T) {
	t.Parallel()
	needShell(t, "bash", "completion of tree ids")
	w := newCompWorld(t)
	for _, tc := range w.cases(t) {
		t.Run(w.name(tc), func(t *testing.T) {
			t.Parallel()
			q := make([]string, len(tc.words))
			for i, word := range tc.words {
				q[i] = sq(word)
			}
			prog := "source " + sq(w.script["bash"]) + "\nCOMP_WORDS=(" + strings.Join(q, " ") + ")\nCOMP_CWORD=" +
				strconv.Itoa(len(tc.words)-1) + "\n_custody\nprintf '%s\\0' \"${COMPREPLY[@]}\"\n"
			w.check(t, tc, "bash", "--norc", "--noprofile", "-c", prog)
		})
	}
}

// TestZshCompletesWords runs the zsh script's function with words and
// CURRENT set as zsh's completion sets them, compadd replaced by a
// function that prints the words it is given (zsh filters them by what is
// typed itself, so the cases whose last word is empty are run).
func TestZshCompletesWords(t *testing.T) {
	t.Parallel()
	needShell(t, "zsh", "completion of tree ids")
	w := newCompWorld(t)
	for _, tc := range w.cases(t) {
		if tc.words[len(tc.words)-1] != "" {
			continue
		}
		t.Run(w.name(tc), func(t *testing.T) {
			t.Parallel()
			q := make([]string, len(tc.words))
			for i, word := range tc.words {
				q[i] = sq(word)
			}
			prog := "compdef() { : }\ncompadd() { [[ $1 == -- ]] && shift; (( $# )) && printf '%s\\0' \"$@\" }\n_files() { : }\n" +
				"source " + sq(w.script["zsh"]) + "\nwords=(" + strings.Join(q, " ") + ")\nCURRENT=" + strconv.Itoa(len(tc.words)) + "\n_custody\n: # nothing offered is no error\n"
			w.check(t, tc, "zsh", "-f", "-c", prog)
		})
	}
}

// TestFishCompletesWords asks fish itself (complete -C) what it offers.
// fish hands a completion function the line's tokens one per line, so a
// -C path holding a newline cannot reach the binary: that case is left out.
func TestFishCompletesWords(t *testing.T) {
	t.Parallel()
	needShell(t, "fish", "completion of tree ids")
	w := newCompWorld(t)
	for _, tc := range w.cases(t) {
		if slices.Contains(tc.words, w.r.Dir) {
			continue
		}
		t.Run(w.name(tc), func(t *testing.T) {
			t.Parallel()
			line := strings.Join(tc.words, " ")
			prog := "source " + fq(w.script["fish"]) + "\nfor c in (complete -C " + fq(line) + ")\n    printf '%s\\0' (string split -m1 \\t -- $c)[1]\nend\n"
			w.check(t, tc, "fish", "--no-config", "-c", prog)
		})
	}
}

// name is tc's subtest name: its words, the repository's path as REPO.
func (w compWorld) name(tc compCase) string {
	name := strings.ReplaceAll(strings.Join(tc.words, " "), w.r.Dir, "REPO")
	if tc.dir != "" {
		name += " (elsewhere)"
	}
	return name
}

// sq quotes s as one bash or zsh word: inside single quotes every byte,
// a newline included, is itself.
func sq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// fq quotes s as one fish word: inside fish's single quotes only \ and \'
// are escapes.
func fq(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(s) + "'"
}

// check runs the shell program argv in tc's directory and compares the
// NUL-ended words it printed with what tc wants offered.
func (w compWorld) check(t *testing.T, tc compCase, argv ...string) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = tc.dir
	if cmd.Dir == "" {
		cmd.Dir = w.r.Dir
	}
	cmd.Env = shellEnv(w.r)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", argv[0], err, out)
	}
	var got []string
	for _, word := range strings.Split(string(out), "\x00") {
		if word != "" {
			got = append(got, word)
		}
	}
	slices.Sort(got)
	if diff := cmp.Diff(tc.want, got); diff != "" {
		t.Errorf("%s completing %q (-want +got):\n%s", argv[0], tc.words, diff)
	}
}
