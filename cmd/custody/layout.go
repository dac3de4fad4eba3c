package main

import (
	"io"
	"strings"
	"unicode/utf8"

	"github.com/custody-sh/custody/machine"
)

// pageWidth is the width human output is laid out in: the 80 columns of a
// terminal nobody resized (DESIGN §9). Text wraps within it; a command
// printed for pasting never does (it must paste as one line), nor does a
// word wider than a line (a long path).
const pageWidth = 80

// minWrapped is the fewest columns a wrapped cell keeps beside its row;
// with fewer left, it goes under the row instead.
const minWrapped = 32

// columns is how many columns s takes on a terminal: one per character
// (custody's own text is ASCII; a name's wide characters may take two, which
// only makes such a line wrap on the terminal).
func columns(s string) int {
	n := 0
	for _, r := range s {
		if r == '\t' {
			n += 8 - n%8
			continue
		}
		n++
	}
	return n
}

// wrapWords breaks text into lines at spaces: the first at most first
// columns wide, each further one at most rest. A word wider than its line
// stands alone on it.
func wrapWords(text string, first, rest int) []string {
	var lines []string
	line, width := "", first
	// Split at each space, not runs of them: a name's two spaces stay two.
	for i, w := range strings.Split(text, " ") {
		switch {
		case i == 0:
			line = w
		case columns(line)+1+columns(w) <= width:
			line += " " + w
		default:
			lines = append(lines, line)
			line, width = w, rest
		}
	}
	return append(lines, line)
}

// paragraph writes text wrapped within pageWidth, each line after the
// first indented by indent spaces.
func paragraph(w io.Writer, text string, indent int) {
	pad := strings.Repeat(" ", indent)
	for i, l := range wrapWords(machine.EscapeControl(text), pageWidth, pageWidth-indent) {
		if i > 0 {
			l = pad + l
		}
		io.WriteString(w, l+"\n")
	}
}

// row is one row of a fitted table: its cells, and lines printed under it
// as they are (a command to paste, never wrapped).
type row struct {
	cells []string
	under []string
}

// fitTable writes rows aligned as table does, each line within pageWidth:
// the last cell of a row too long for it wraps, its further lines starting
// under its first; with fewer than minWrapped columns left beside the row,
// the last cell goes on the lines under the row, indented four columns
// more than the row. Every cell has its control characters and bytes that
// are not UTF-8 escaped. paint, when set, colours the cell of a row and
// column once it is laid out (padding is measured without it).
func fitTable(w io.Writer, rows []row, paint func(row, col int, cell string) string) {
	layTable(w, rows, paint, pageWidth)
}

// layTable is fitTable within width columns; a width of 0 never wraps (a
// list kept to one line per row, to be searched line by line).
func layTable(w io.Writer, rows []row, paint func(row, col int, cell string) string, width int) {
	if len(rows) == 0 {
		return
	}
	n := 0
	for _, r := range rows {
		n = max(n, len(r.cells))
	}
	colw := make([]int, n)
	escaped := make([][]string, len(rows))
	for i, r := range rows {
		escaped[i] = make([]string, len(r.cells))
		for j, c := range r.cells {
			c = machine.EscapeControl(c)
			escaped[i][j] = c
			if j < len(r.cells)-1 {
				colw[j] = max(colw[j], columns(c))
			}
		}
	}
	if paint == nil {
		paint = func(_, _ int, c string) string { return c }
	}
	for i, r := range rows {
		cells := escaped[i]
		var b strings.Builder
		at := 0
		for j, c := range cells[:max(len(cells)-1, 0)] {
			b.WriteString(paint(i, j, c))
			pad := colw[j] - columns(c) + 2
			b.WriteString(strings.Repeat(" ", pad))
			at += columns(c) + pad
		}
		last := ""
		if len(cells) > 0 {
			last = cells[len(cells)-1]
		}
		lastCol := len(cells) - 1
		switch {
		case last == "":
			io.WriteString(w, strings.TrimRight(b.String(), " ")+"\n")
		case width == 0 || at+columns(last) <= width:
			io.WriteString(w, b.String()+paint(i, lastCol, last)+"\n")
		case width-at >= minWrapped:
			lines := wrapWords(last, width-at, width-at)
			io.WriteString(w, b.String()+paint(i, lastCol, lines[0])+"\n")
			pad := strings.Repeat(" ", at)
			for _, l := range lines[1:] {
				io.WriteString(w, pad+paint(i, lastCol, l)+"\n")
			}
		default:
			io.WriteString(w, strings.TrimRight(b.String(), " ")+"\n")
			indent := len(cells[0]) - len(strings.TrimLeft(cells[0], " ")) + 4
			pad := strings.Repeat(" ", indent)
			for _, l := range wrapWords(last, width-indent, width-indent) {
				io.WriteString(w, pad+paint(i, lastCol, l)+"\n")
			}
		}
		for _, u := range r.under {
			io.WriteString(w, u+"\n")
		}
	}
}

// tableLines is rows fitted as fitTable writes them, as lines.
func tableLines(rows []row) []string {
	if len(rows) == 0 {
		return nil
	}
	var b strings.Builder
	fitTable(&b, rows, nil)
	return strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
}

// screenRows is how many rows of a terminal cols wide text takes, its
// long lines folded by the terminal; escape sequences (colour) take none.
func screenRows(text []byte, cols int) int {
	if cols <= 0 {
		cols = pageWidth
	}
	rows := 0
	for _, line := range strings.SplitAfter(string(text), "\n") {
		if line == "" {
			continue
		}
		n := columns(stripEscapes(strings.TrimSuffix(line, "\n")))
		rows += max(1, (n+cols-1)/cols)
	}
	return rows
}

// stripEscapes drops the SGR escape sequences (ESC [ ... m) custody
// colours with.
func stripEscapes(s string) string {
	if !strings.Contains(s, "\033[") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && s[j] != 'm' {
				j++
			}
			i = j + 1
			continue
		}
		_, n := utf8.DecodeRuneInString(s[i:])
		b.WriteString(s[i : i+n])
		i += n
	}
	return b.String()
}
