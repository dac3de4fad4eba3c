package machine

import (
	"os/exec"
	"strings"
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

// TestShellWordPastes: every word, printed by ShellWord, QuoteArg or
// Command, holds no control character (but a newline that ends it), and
// every POSIX shell at hand given the printed word passes exactly the
// original, running nothing it holds.
func TestShellWordPastes(t *testing.T) {
	t.Parallel()
	var shells []string
	for _, sh := range []string{"/bin/sh", "dash", "bash", "zsh", "busybox"} {
		if p, err := exec.LookPath(sh); err == nil {
			shells = append(shells, p)
		}
	}
	if len(shells) == 0 {
		t.Skip("no shell to paste into")
	}
	for _, s := range []string{
		"simple", "with space", `it's`, "$(touch PWNED)", "`touch PWNED`", "a\nb; touch PWNED",
		"quote' ; touch PWNED; '", "esc\x1b[31mred", "bad\xffbyte", `back\slash'`, "tab\there", "é $HOME",
		"-leading-dash", "100%s %d", "ends\n\n", "\n", "\x01\x02\x7f\u0085é\xc3", "pct%\n\\012", "",
	} {
		for name, w := range map[string]string{"ShellWord": ShellWord(s), "QuoteArg": QuoteArg(s)} {
			if HasControl(strings.TrimRight(w, "\n'")) {
				t.Errorf("%s(%q) = %q holds a control character", name, s, w)
			}
			for _, sh := range shells {
				dir := t.TempDir()
				args := []string{"-c", "printf %s " + w + "; printf '|%s' " + Command("x", s, "y")}
				if strings.HasSuffix(sh, "busybox") {
					args = append([]string{"sh"}, args...)
				}
				cmd := exec.Command(sh, args...)
				cmd.Dir = dir
				out, err := cmd.Output()
				if want := s + "|x|" + s + "|y"; err != nil || string(out) != want {
					t.Errorf("%s -c 'printf %%s %s' = %q, %v; want %q", sh, w, out, err, want)
				}
				if m, _ := exec.Command("ls", "-A", dir).Output(); len(m) != 0 {
					t.Errorf("pasting %s into %s ran something: %s", w, sh, m)
				}
			}
		}
	}
}

// TestQuoteArgEscapesControl: QuoteArg, which every retry line uses,
// never prints a control character raw.
func TestQuoteArgEscapesControl(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain/path":     "plain/path",
		"with space":     "'with space'",
		"line\nbreak":    `"$(printf -- 'line\012break')"`,
		"esc\x1b[31m":    `"$(printf -- 'esc\033[31m')"`,
		"a'b\x01%":       `"$(printf -- 'a'\''b\001%%')"`,
		"":               "''",
		"--git-dir=/a b": "--git-dir='/a b'",
		"--x=":           "--x=''",
		"-x=a b":         "'-x=a b'",
	} {
		if got := QuoteArg(in); got != want {
			t.Errorf("QuoteArg(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestCommandQuotesEachWord: Command leaves plain words bare and quotes
// every other one on its own.
func TestCommandQuotesEachWord(t *testing.T) {
	t.Parallel()
	got := Command("custody", "finish", "x;$(touch pwned)", "--", "-a b")
	if want := `custody finish 'x;$(touch pwned)' -- '-a b'`; got != want {
		t.Errorf("Command = %s, want %s", got, want)
	}
}
