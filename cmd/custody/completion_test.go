package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// compScript writes custody's completion script for shell into a temp
// dir, as `custody completion SHELL` prints it, and returns its path.
func compScript(t *testing.T, shell string) string {
	t.Helper()
	out, err := exec.Command(custodyBin, "completion", shell).Output()
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
	for _, tt := range []struct {
		line string // the words before the cursor, the last one being completed
		want []string
	}{
		{"custody pl", []string{"plan"}},
		{"custody archive ", []string{"create", "list", "prune", "restore", "verify"}},
		{"custody -C /tmp archive ve", []string{"verify"}},
		{"custody --json journal ", []string{"export", "head", "report", "sign", "verify"}},
		{"custody completion ", []string{"bash", "fish", "zsh"}},
		{"custody journal export --format ", []string{"jsonl", "md"}},
		{"custody plan --det", []string{"--detailed-exitcode"}},
		{"custody plan -o pl", []string{}}, // a file: left to bash's default
		{"custody re", []string{"recovered", "reopen", "resource", "resume"}},
	} {
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
