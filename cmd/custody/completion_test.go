package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/google/go-cmp/cmp"
)

// compScript writes custody's completion script for shell into a temp
// dir, as `custody completion SHELL` prints it, and returns its path.
func compScript(t *testing.T, shell string) string {
	t.Helper()
	out, err := exec.Command(clitest.Bin(), "completion", shell).Output()
	if err != nil {
		t.Fatalf("custody completion %s: %v", shell, err)
	}
	p := filepath.Join(t.TempDir(), "custody."+shell)
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCompletionScriptsParse: each shell reads its script without a
// syntax error (zsh -n, fish --no-execute, bash -n); a shell that is not
// installed is skipped by name.
func TestCompletionScriptsParse(t *testing.T) {
	t.Parallel()
	for shell, check := range map[string][]string{"bash": {"-n"}, "zsh": {"-n"}, "fish": {"--no-execute"}} {
		t.Run(shell, func(t *testing.T) {
			t.Parallel()
			if _, err := exec.LookPath(shell); err != nil {
				t.Skipf("%s is not installed: its script's syntax is not checked", shell)
			}
			p := compScript(t, shell)
			if out, err := exec.Command(shell, append(check, p)...).CombinedOutput(); err != nil {
				t.Errorf("%s %v %s: %v\n%s", shell, check, p, err, out)
			}
		})
	}
}

// TestBashCompletes runs the bash script's completion function as bash's
// programmable completion does (COMP_WORDS, COMP_CWORD) and checks what
// it offers.
func TestBashCompletes(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	script := compScript(t, "bash")
	cases := append([]struct {
		line string
		want []string
	}{
		{"custody plan -o pl", []string{}}, // a file: left to bash's default
		// bash splits --format=j at COMP_WORDBREAKS' "=".
		{"custody journal export --format = j", []string{"jsonl"}},
		{"custody journal export --format = jsonl ", []string{}},
	}, compCases...)
	for _, tt := range cases {
		t.Run(tt.line, func(t *testing.T) {
			t.Parallel()
			words := strings.Split(tt.line, " ")
			var arr strings.Builder
			for _, w := range words {
				arr.WriteString(shQuote(w) + " ")
			}
			prog := "source " + shQuote(script) + "\nCOMP_WORDS=(" + arr.String() + ")\nCOMP_CWORD=" +
				strconv.Itoa(len(words)-1) + "\n_custody\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
			out, err := exec.Command("bash", "--norc", "--noprofile", "-c", prog).CombinedOutput()
			if err != nil {
				t.Fatalf("bash: %v\n%s", err, out)
			}
			got := strings.Fields(string(out))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("completing %q (-want +got):\n%s", tt.line, diff)
			}
		})
	}
}

// compCases are completions every shell's script must give: the words
// before the cursor (the last one being completed) and the candidates
// offered.
var compCases = []struct {
	line string
	want []string
}{
	{"custody pl", []string{"plan"}},
	{"custody archive ", []string{"create", "list", "prune", "restore", "verify"}},
	{"custody -C /tmp archive ve", []string{"verify"}},
	{"custody --json journal ", []string{"export", "head", "report", "sign", "verify"}},
	{"custody completion ", []string{"bash", "fish", "zsh"}},
	{"custody journal export --format ", []string{"jsonl", "md"}},
	{"custody plan --det", []string{"--detailed-exitcode"}},
	{"custody re", []string{"recovered", "relocate", "remove", "reopen", "resource", "resume"}},
}

// TestFishCompletes asks fish itself (complete -C) what it offers.
func TestFishCompletes(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("fish"); err != nil {
		t.Skip("fish is not installed: its completions are not run")
	}
	script := compScript(t, "fish")
	for _, tt := range compCases {
		t.Run(tt.line, func(t *testing.T) {
			t.Parallel()
			out, err := exec.Command("fish", "--no-config", "-c", "source "+shQuote(script)+"; complete -C "+shQuote(tt.line)).CombinedOutput()
			if err != nil {
				t.Fatalf("fish: %v\n%s", err, out)
			}
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				if w, _, _ := strings.Cut(l, "\t"); w != "" {
					got = append(got, w)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("completing %q (-want +got):\n%s", tt.line, diff)
			}
		})
	}
}

// TestZshCompletes runs the zsh script's function with words and CURRENT
// set as zsh's completion sets them, and compadd, _describe and _files
// replaced by functions that print the words they are given. zsh filters compadd's words
// by the prefix itself, so only lines ending in a space are run.
func TestZshCompletes(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("zsh"); err != nil {
		t.Skip("zsh is not installed: its completions are not run")
	}
	script := compScript(t, "zsh")
	cases := append([]struct {
		line string
		want []string
	}{{"custody plan -o ", []string{"<files>"}}}, compCases...)
	for _, tt := range cases {
		if !strings.HasSuffix(tt.line, " ") {
			continue
		}
		t.Run(tt.line, func(t *testing.T) {
			t.Parallel()
			words := strings.Split(tt.line, " ")
			q := make([]string, len(words))
			for i, w := range words {
				q[i] = shQuote(w)
			}
			prog := "compdef() { : }\ncompadd() { [[ $1 == -- ]] && shift; print -rl -- \"$@\" }\n_files() { print -r -- '<files>' }\n" +
				"_describe() { local -a a=(\"${(@P)${@[-1]}}\"); print -rl -- \"${a[@]%%:*}\" }\n" +
				"source " + shQuote(script) + "\nwords=(" + strings.Join(q, " ") + ")\nCURRENT=" + strconv.Itoa(len(words)) + "\n_custody\n"
			out, err := exec.Command("zsh", "-f", "-c", prog).CombinedOutput()
			if err != nil {
				t.Fatalf("zsh: %v\n%s", err, out)
			}
			if diff := cmp.Diff(tt.want, strings.Fields(string(out))); diff != "" {
				t.Errorf("completing %q (-want +got):\n%s", tt.line, diff)
			}
		})
	}
}

// TestCompleteTagsNameKnownKinds: every complete tag names a kind that
// __complete takes (its enum), every kind is used by some argument or
// flag, and the commands that take a tree, a branch or an archive say so.
func TestCompleteTagsNameKnownKinds(t *testing.T) {
	t.Parallel()
	doc, err := wholeCLI()
	if err != nil {
		t.Fatal(err)
	}
	app, err := cliModel()
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, c := range app.Node.Children {
		if c.Name == "__complete" {
			kinds = c.Positional[0].EnumSlice()
		}
	}
	if len(kinds) == 0 {
		t.Fatal("no __complete command with an enum argument in the CLI")
	}
	got := map[string]string{} // "path arg|--flag" -> kind
	used := map[string]bool{}
	for _, c := range all(doc.Commands) {
		for _, a := range c.Args {
			if a.Complete != "" {
				got[c.Path+" <"+a.Name+">"] = a.Complete
			}
		}
		for _, f := range c.Flags {
			if f.Complete != "" {
				got[c.Path+" --"+f.Name] = f.Complete
			}
		}
	}
	for where, kind := range got {
		used[kind] = true
		if !slices.Contains(kinds, kind) {
			t.Errorf("%s: complete:%q is no kind __complete takes (%v)", where, kind, kinds)
		}
	}
	for _, k := range kinds {
		if !used[k] {
			t.Errorf("__complete takes kind %q, but no argument or flag asks for it", k)
		}
	}
	for where, kind := range map[string]string{
		"show <id>": "trees", "path <id>": "trees", "switch <id>": "trees", "finish <id>": "trees",
		"reopen <id>": "trees", "relocate <id>": "trees", "archive create <id>": "trees",
		"journal export --record": "records", "new --from": "branches",
		"archive verify <archive>": "archives", "archive restore <archive>": "archives", "archive prune --apply": "archives",
	} {
		if got[where] != kind {
			t.Errorf("%s completes %q, want %q", where, got[where], kind)
		}
	}
}
