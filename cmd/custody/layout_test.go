package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWrapWords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text        string
		first, rest int
		want        []string
	}{
		{"a b c", 80, 80, []string{"a b c"}},
		{"aaa bbb ccc", 7, 7, []string{"aaa bbb", "ccc"}},
		{"aaa bbb ccc", 3, 7, []string{"aaa", "bbb ccc"}},
		{"a-very-long-word b", 4, 4, []string{"a-very-long-word", "b"}},
		{"two  spaces", 80, 80, []string{"two  spaces"}},
		{"", 10, 10, []string{""}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, wrapWords(tt.text, tt.first, tt.rest)); diff != "" {
			t.Errorf("wrapWords(%q, %d, %d) (-want +got):\n%s", tt.text, tt.first, tt.rest, diff)
		}
	}
}

// TestFitTable: rows align as table does; a last cell too long wraps under
// its first line, or under the row when too little is left beside it; the
// lines under a row are printed as they are, however long; control
// characters are escaped; paint colours after the padding is measured.
func TestFitTable(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("word ", 20)
	var b strings.Builder
	fitTable(&b, []row{
		{cells: []string{"  a", "short"}},
		{cells: []string{"  bb", strings.TrimSpace(long)}, under: []string{"    " + strings.Repeat("x", 90)}},
		{cells: []string{"  c\nd", "x"}},
	}, func(_, col int, c string) string {
		if col == 0 {
			return "<" + c + ">"
		}
		return c
	})
	fitTable(&b, []row{{cells: []string{"  " + strings.Repeat("p", 50), "beside a wide path: " + strings.TrimSpace(long)}}}, nil)
	got := b.String()
	want := "<  a>     short\n" +
		"<  bb>    word word word word word word word word word word word word word word\n" +
		"        word word word word word word\n" + // under the cell's first line: paint takes no column

		"    " + strings.Repeat("x", 90) + "\n" +
		`<  c\nd>  x` + "\n" +
		"  " + strings.Repeat("p", 50) + "\n" +
		"      beside a wide path: word word word word word word word word word word word\n" +
		"      word word word word word word word word word\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fitTable (-want +got):\n%s", diff)
	}
	for _, l := range strings.Split(got, "\n") {
		if n := columns(stripEscapes(strings.NewReplacer("<", "", ">", "").Replace(l))); n > pageWidth && !strings.Contains(l, "xxxx") {
			t.Errorf("line of %d columns: %q", n, l)
		}
	}
}

func TestScreenRows(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text string
		cols int
		want int
	}{
		{"a\nb\n", 80, 2},
		{strings.Repeat("x", 81) + "\n", 80, 2},
		{strings.Repeat("x", 80) + "\n", 80, 1},
		{"\033[32m" + strings.Repeat("x", 80) + "\033[m\n", 80, 1},
		{"\tto retry: x\n", 10, 2},
		{"\n\n", 80, 2},
	}
	for _, tt := range tests {
		if got := screenRows([]byte(tt.text), tt.cols); got != tt.want {
			t.Errorf("screenRows(%q, %d) = %d, want %d", tt.text, tt.cols, got, tt.want)
		}
	}
}

func TestPagerCommand(t *testing.T) {
	t.Parallel()
	env := func(kv ...string) func(string) (string, bool) {
		return func(k string) (string, bool) {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1], true
				}
			}
			return "", false
		}
	}
	tests := []struct {
		name   string
		lookup func(string) (string, bool)
		want   string
	}{
		{"nothing set", env(), "less"},
		{"PAGER", env("PAGER", "more"), "more"},
		{"CUSTODY_PAGER first", env("CUSTODY_PAGER", "less -S", "PAGER", "more"), "less -S"},
		{"CUSTODY_PAGER empty disables", env("CUSTODY_PAGER", "", "PAGER", "more"), ""},
		{"PAGER empty disables", env("PAGER", ""), ""},
		{"only spaces disables", env("PAGER", "  "), ""},
		{"cat disables", env("PAGER", "cat"), ""},
	}
	for _, tt := range tests {
		if got := pagerCommand(tt.lookup); got != tt.want {
			t.Errorf("%s: pagerCommand = %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := pagerEnv(env()); !cmp.Equal(got, []string{"LESS=FRX", "LV=-c"}) {
		t.Errorf("pagerEnv with LESS and LV unset = %q", got)
	}
	if got := pagerEnv(env("LESS", "", "LV", "-x")); len(got) != 0 {
		t.Errorf("pagerEnv with LESS and LV set = %q, want nothing added", got)
	}
}
