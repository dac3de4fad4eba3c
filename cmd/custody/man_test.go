package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestManPageFormats: groff reads docs/custody.1 with every warning on
// and reports none.
func TestManPageFormats(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("groff"); err != nil {
		t.Skip("groff is not installed: the man page is not formatted")
	}
	out, err := exec.Command("groff", "-man", "-Tutf8", "-ww", "-z", filepath.Join("..", "..", "docs", "custody.1")).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("groff -man -ww docs/custody.1: %v\n%s", err, out)
	}
}

// TestManPageFitsEightyColumns: the page's roff source has no line wider
// than 80 columns, and man sets it on a terminal 80 columns wide with no
// line wider than that (its long help filled, its examples kept whole).
func TestManPageFitsEightyColumns(t *testing.T) {
	t.Parallel()
	d, err := wholeCLI()
	if err != nil {
		t.Fatal(err)
	}
	page := manPage(d)
	for i, l := range strings.Split(page, "\n") {
		if n := utf8.RuneCountInString(l); n > manWidth {
			t.Errorf("custody.1 line %d is %d columns wide: %q", i+1, n, l)
		}
	}
	if _, err := exec.LookPath("groff"); err != nil {
		t.Skip("groff is not installed: the page is not set")
	}
	cmd := exec.Command("groff", "-man", "-Tutf8", "-rLL=80n", "-P-cbou")
	cmd.Stdin = strings.NewReader(page)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("groff: %v", err)
	}
	for i, l := range strings.Split(string(out), "\n") {
		if n := utf8.RuneCountInString(l); n > manWidth {
			t.Errorf("set at 80 columns, line %d is %d wide: %q", i+1, n, l)
		}
	}
	if !strings.Contains(string(out), "\n         bash:  source <(custody completion bash)\n") {
		t.Errorf("the completion example is not set as written, indented:\n%s", out)
	}
}

func TestFill(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"one  line\nof text", "one line of text\n"},
		{"a --flag", `a \-\-flag` + "\n"},
		{strings.Repeat("word ", 16) + ".dot 'quote", strings.TrimSpace(strings.Repeat("word ", 16)) + "\n" + `\&.dot 'quote` + "\n"},
		{strings.Repeat("w", 90), strings.Repeat("w", 90) + "\n"},
	} {
		if got := fill(tc.in); got != tc.want {
			t.Errorf("fill(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestManDetail(t *testing.T) {
	got := manDetail("Prose on\ntwo lines.\n\nLoad it:\n\n    a: one\n    b: two\nthen more.")
	want := ".PP\nProse on two lines.\n.PP\nLoad it:\n.PP\n.RS 2\n.nf\na: one\nb: two\n.fi\n.RE\n.PP\nthen more.\n"
	if got != want {
		t.Errorf("manDetail = %q, want %q", got, want)
	}
}
