package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
)

// listColumn is one column of list's table.
type listColumn struct {
	head string
	// cell is the row's text, its control characters and bytes that are
	// not UTF-8 escaped.
	cell func(r steps.ListRow) string
	// elide says the column may be shortened, down to min columns, with
	// its middle elided (its end, with elideEnd), when the table is wider
	// than the terminal.
	elide    bool
	elideEnd bool
	min      int
	// right aligns the column right (numbers).
	right bool
	// paint is the escape that colours the cell ("" for none).
	paint func(r steps.ListRow) string
	// live says the cell is known only once the tree is read: a table
	// printed as rows come sizes it ahead (liveWidth).
	live bool
}

// liveWidth is the width a column of words (STATUS) gets when rows are
// printed before they are all read: wide enough for "unpushed 99".
const liveWidth = 11

// listTable is list's table laid out for a set of rows.
type listTable struct {
	v      listView
	cols   []listColumn
	widths []int
}

// columns are the table's columns: id, branch, state, status, age and
// path; --wide adds the intent, HEAD, the upstream and the counts, the
// lease and the creation time, and shows the path in full.
func (v listView) columns() []listColumn {
	dash := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	glance := func(r steps.ListRow, f func(g *machine.Glance) string) string {
		if r.Glance == nil {
			return "-"
		}
		return dash(f(r.Glance))
	}
	// An id is elided at its end: what is left is still a prefix custody
	// takes for the id (when no other id starts so).
	id := listColumn{head: "ID", elide: true, elideEnd: true, min: 10, cell: func(r steps.ListRow) string { return machine.EscapeControl(r.Record.ID) }}
	branch := listColumn{head: "BRANCH", elide: true, min: 10, cell: func(r steps.ListRow) string { return machine.EscapeControl(dash(r.Record.Branch)) }}
	state := listColumn{head: "STATE", cell: func(r steps.ListRow) string { return string(r.Record.State) }, paint: func(r steps.ListRow) string { return stateColour(r.Record.State) }}
	status := listColumn{head: "STATUS", live: true, cell: func(r steps.ListRow) string { return r.Verdict.Word() }, paint: func(r steps.ListRow) string { return statusColour(r.Verdict.Status) }}
	age := listColumn{head: "AGE", right: true, cell: func(r steps.ListRow) string { return machine.ShortAge(r.Record.CreatedAt, v.now) }}
	path := listColumn{head: "PATH", elide: true, min: 12, cell: func(r steps.ListRow) string { return v.paths.show(r.Record.Path) }}
	if !v.wide {
		return []listColumn{id, branch, state, status, age, path}
	}
	path.cell = func(r steps.ListRow) string { return machine.EscapeControl(r.Record.Path) }
	intent := listColumn{head: "INTENT", cell: func(r steps.ListRow) string {
		if r.Record.Intent == nil {
			return "-"
		}
		return string(r.Record.Intent.Kind)
	}}
	head := listColumn{head: "HEAD", live: true, cell: func(r steps.ListRow) string {
		return glance(r, func(g *machine.Glance) string { return machine.Abbrev(g.Head, machine.ShortCommit) })
	}}
	upstream := listColumn{head: "UPSTREAM", live: true, cell: func(r steps.ListRow) string {
		return glance(r, func(g *machine.Glance) string {
			if g.UpstreamGone {
				return "(gone)"
			}
			return machine.EscapeControl(g.Upstream)
		})
	}}
	count := func(head string, n func(g *machine.Glance) int) listColumn {
		return listColumn{head: head, live: true, right: true, cell: func(r steps.ListRow) string {
			return glance(r, func(g *machine.Glance) string {
				if !g.Counted {
					return "?"
				}
				return strconv.Itoa(n(g))
			})
		}}
	}
	changes := func(head string, n func(c machine.GlanceChanges) int) listColumn {
		return listColumn{head: head, live: true, right: true, cell: func(r steps.ListRow) string {
			return glance(r, func(g *machine.Glance) string {
				if !g.StatusKnown {
					return "?"
				}
				return strconv.Itoa(n(g.Changes))
			})
		}}
	}
	lease := listColumn{head: "LEASE", cell: func(r steps.ListRow) string {
		if !r.Lease.Live(v.now) {
			return "-"
		}
		return machine.EscapeControl(r.Lease.Holder)
	}}
	created := listColumn{head: "CREATED", cell: func(r steps.ListRow) string {
		if r.Record.CreatedAt.IsZero() {
			return "-"
		}
		return r.Record.CreatedAt.UTC().Format("2006-01-02T15:04:05Z")
	}}
	id.elide, branch.elide, path.elide = false, false, false
	return []listColumn{id, branch, state, intent, status, head, upstream,
		count("AHEAD", func(g *machine.Glance) int { return g.Ahead }),
		count("BEHIND", func(g *machine.Glance) int { return g.Behind }),
		changes("CHANGED", func(c machine.GlanceChanges) int { return c.Changed }),
		changes("UNTRACKED", func(c machine.GlanceChanges) int { return c.Untracked }),
		lease, age, created, path}
}

// table lays out rows: each column as wide as its widest cell, then, while
// the table is wider than v.width, the widest of the id, branch and path
// narrowed by a column (down to their minimum). ahead says the rows are not read yet: the
// columns known only then get liveWidth.
func (v listView) table(rows []steps.ListRow, ahead bool) *listTable {
	t := &listTable{v: v, cols: v.columns()}
	t.widths = make([]int, len(t.cols))
	for i, c := range t.cols {
		w := utf8.RuneCountInString(c.head)
		if c.live && ahead {
			w = max(w, liveWidth)
		} else {
			for _, r := range rows {
				w = max(w, utf8.RuneCountInString(c.cell(r)))
			}
		}
		t.widths[i] = w
	}
	if v.width <= 0 {
		return t
	}
	total := 2 * (len(t.widths) - 1)
	for _, w := range t.widths {
		total += w
	}
	// The widest column that may be elided gives up a column, until the
	// table fits or every such column is at its minimum.
	for total > v.width {
		widest := -1
		for i, c := range t.cols {
			if c.elide && t.widths[i] > c.min && (widest < 0 || t.widths[i] > t.widths[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			break
		}
		t.widths[widest]--
		total--
	}
	return t
}

// header writes the column names.
func (t *listTable) header(w io.Writer) {
	cells := make([]string, len(t.cols))
	for i, c := range t.cols {
		cells[i] = c.head
	}
	t.line(w, cells, nil)
}

// row writes one row.
func (t *listTable) row(w io.Writer, r steps.ListRow) {
	cells := make([]string, len(t.cols))
	paints := make([]string, len(t.cols))
	for i, c := range t.cols {
		cells[i] = c.cell(r)
		if c.paint != nil && t.v.colour {
			paints[i] = c.paint(r)
		}
	}
	t.line(w, cells, paints)
}

// line writes cells in the table's columns: each elided to its column's
// width where the column may be, padded to it (the last not padded),
// coloured by its paint, two spaces between columns.
func (t *listTable) line(w io.Writer, cells, paints []string) {
	var b strings.Builder
	for i, c := range cells {
		col := t.cols[i]
		switch {
		case col.elideEnd:
			c = elideEnd(c, t.widths[i])
		case col.elide:
			c = machine.ElideMiddle(c, t.widths[i])
		}
		pad := max(0, t.widths[i]-utf8.RuneCountInString(c))
		if paints != nil && paints[i] != "" {
			c = paints[i] + c + "\033[0m"
		}
		last := i == len(cells)-1
		switch {
		case col.right:
			b.WriteString(strings.Repeat(" ", pad) + c)
		case last:
			b.WriteString(c)
		default:
			b.WriteString(c + strings.Repeat(" ", pad))
		}
		if !last {
			b.WriteString("  ")
		}
	}
	fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
}

// summary writes the line that counts the rows by word, and the next
// command when plan would likely remove some: "40 trees: 31 clean, 4
// dirty, 3 unpushed, 1 leased, 1 would-go".
func (v listView) summary(w io.Writer, rows []steps.ListRow) {
	counts := map[machine.TreeStatus]int{}
	for _, r := range rows {
		counts[r.Verdict.Status]++
	}
	fmt.Fprint(w, wrapList(plural(len(rows), "tree")+": ", countParts(counts), v.width))
	if counts[machine.TreeWouldGo] > 0 {
		fmt.Fprintln(w, "next: custody plan")
	}
}

// countWords is "31 clean, 4 dirty" in the order the words win, the
// words that count none left out.
func countWords(counts map[machine.TreeStatus]int) string {
	return strings.Join(countParts(counts), ", ")
}

// countParts are countWords' parts: "31 clean", "4 dirty"; "none" when
// every count is 0.
func countParts(counts map[machine.TreeStatus]int) []string {
	var parts []string
	for _, s := range machine.TreeStatuses {
		if n := counts[s]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, s))
		}
	}
	if len(parts) == 0 {
		return []string{"none"}
	}
	return parts
}

// wrapList writes prefix and parts joined by ", " in lines of at most
// width columns (no limit when width is 0), each line after the first
// indented by two.
func wrapList(prefix string, parts []string, width int) string {
	var b strings.Builder
	line := prefix
	for i, p := range parts {
		sep := ""
		if i < len(parts)-1 {
			sep = ","
		}
		switch {
		case i == 0:
			line += p + sep
		case width > 0 && utf8.RuneCountInString(line)+1+utf8.RuneCountInString(p+sep) > width:
			b.WriteString(line + "\n")
			line = "  " + p + sep
		default:
			line += " " + p + sep
		}
	}
	b.WriteString(line + "\n")
	return b.String()
}

// plural is "1 tree", "2 trees".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// The escapes list colours a state or a word with, where escapes are
// allowed (escapesAllowed): nothing else is coloured.
const (
	escRed     = "\033[31m"
	escGreen   = "\033[32m"
	escYellow  = "\033[33m"
	escBlue    = "\033[34m"
	escMagenta = "\033[35m"
	escCyan    = "\033[36m"
	escDim     = "\033[2m"
)

// stateColour is the colour of a record's state.
func stateColour(s machine.State) string {
	switch s {
	case machine.StateActive:
		return escGreen
	case machine.StateFinished:
		return escBlue
	case machine.StateTombstoned:
		return escDim
	}
	return escYellow // provisioning, relocating, removing: an intent is carried
}

// statusColour is the colour of list's word.
func statusColour(s machine.TreeStatus) string {
	switch s {
	case machine.TreeDirty, machine.TreeMissing, machine.TreeUnknown:
		return escRed
	case machine.TreeUnpushed, machine.TreeBehind, machine.TreePending:
		return escYellow
	case machine.TreeDiverged:
		return escMagenta
	case machine.TreeLeased:
		return escCyan
	case machine.TreeWouldGo:
		return escGreen
	case machine.TreeGone:
		return escDim
	}
	return ""
}

// elideEnd shortens s to width runes, its end replaced by "…".
func elideEnd(s string, width int) string {
	r := []rune(s)
	if len(r) <= width || width < 1 {
		return s
	}
	return string(r[:width-1]) + "…"
}
