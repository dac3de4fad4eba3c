package machine

import (
	"os/exec"
	"testing"
)

// TestEscapeControl: control characters and invalid bytes become escapes;
// other text is left as it is.
func TestEscapeControl(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain/path é":         "plain/path é",
		`back\slash`:           `back\slash`,
		"a\nb":                 `a\nb`,
		"x\x1b[2Jy":            `x\e[2Jy`,
		"tab\tcr\r\\":          `tab\tcr\r\\`,
		"bad\xffbyte":          `bad\xffbyte`,
		"nel\u0085del\x7f":     `nel\u0085del\x7f`,
		"pid 1 on h (custody)": "pid 1 on h (custody)",
	} {
		if got := EscapeControl(in); got != want {
			t.Errorf("EscapeControl(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestShellWordPastes: every word, printed by ShellWord, holds no control
// character, and bash given the printed word passes exactly the original,
// running nothing it holds.
func TestShellWordPastes(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	for _, s := range []string{
		"simple", "with space", `it's`, "$(touch PWNED)", "`touch PWNED`", "a\nb; touch PWNED",
		"quote' ; touch PWNED; '", "esc\x1b[31mred", "bad\xffbyte", `back\slash'`, "tab\there", "é $HOME",
	} {
		w := ShellWord(s)
		if HasControl(w) {
			t.Errorf("ShellWord(%q) = %q holds a control character", s, w)
		}
		dir := t.TempDir()
		cmd := exec.Command(bash, "-c", "printf %s "+w)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil || string(out) != s {
			t.Errorf("bash -c 'printf %%s %s' = %q, %v; want %q", w, out, err, s)
		}
		if m, _ := exec.Command("ls", "-A", dir).Output(); len(m) != 0 {
			t.Errorf("pasting %s ran something: %s", w, m)
		}
	}
}

// TestQuoteArgEscapesControl: QuoteArg, which every retry line uses,
// never prints a control character raw.
func TestQuoteArgEscapesControl(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain/path":  "plain/path",
		"with space":  "'with space'",
		"line\nbreak": `$'line\nbreak'`,
		"esc\x1b[31m": `$'esc\x1b[31m'`,
	} {
		if got := QuoteArg(in); got != want {
			t.Errorf("QuoteArg(%q) = %s, want %s", in, got, want)
		}
	}
}
