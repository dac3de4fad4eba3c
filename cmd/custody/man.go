package main

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// manPage renders custody(1) in roff (man macros) from d: every command,
// its arguments and flags, and the exit codes. No date or version goes in,
// so the page depends only on the model.
func manPage(d cliDoc) string {
	var b strings.Builder
	fmt.Fprintf(&b, `.\" %s;`+"\n"+`.\" run "custody man" or "go generate ./..." to make it again.`+"\n", roffNote())
	fmt.Fprintf(&b, ".TH %s 1 \"\" \"%s\" \"User Commands\"\n", strings.ToUpper(d.Name), d.Name)
	// Not hyphenated and not justified: a flag, a path or a command is
	// never broken at a hyphen it does not have, and words stay one space
	// apart.
	b.WriteString(".nh\n.ad l\n")
	b.WriteString(".SH NAME\n")
	b.WriteString(fill(d.Name + " - " + strings.TrimPrefix(d.Description, d.Name+" ")))
	b.WriteString(".SH SYNOPSIS\n")
	fmt.Fprintf(&b, ".B %s\n[\\fIflags\\fR] \\fIcommand\\fR [\\fIargs\\fR]\n", d.Name)
	b.WriteString(".SH DESCRIPTION\n")
	b.WriteString(fill(d.Description))
	b.WriteString(".SH GLOBAL FLAGS\n")
	for _, f := range d.Globals {
		manFlag(&b, f)
	}
	b.WriteString(".SH COMMANDS\n")
	for _, c := range all(d.Commands) {
		fmt.Fprintf(&b, ".SS %s\n", roff(c.Usage(d.Name)))
		b.WriteString(fill(c.Help))
		b.WriteString(manDetail(c.Detail))
		for _, a := range c.Args {
			fmt.Fprintf(&b, ".TP\n.I %s\n%s", roff("<"+a.Name+">"), fill(argHelp(a)))
		}
		for _, f := range c.Flags {
			manFlag(&b, f)
		}
	}
	b.WriteString(".SH EXIT STATUS\n")
	for _, e := range exitCodeDocs() {
		fmt.Fprintf(&b, ".TP\n.B %d\n%s", e.Code, fill(strings.ReplaceAll(e.Meaning, "`", "")))
	}
	b.WriteString(".SH SEE ALSO\n")
	b.WriteString(".BR git-worktree (1)\n")
	return b.String()
}

func manFlag(b *strings.Builder, f flagDoc) {
	fmt.Fprintf(b, ".TP\n.B %s\n%s", roff(f.Spelling()), fill(strings.ReplaceAll(flagHelp(f), "`", "")))
}

// argHelp is an argument's help with its values.
func argHelp(a argDoc) string {
	h := a.Help
	if len(a.Enum) > 0 {
		h += " One of: " + strings.Join(a.Enum, ", ") + "."
	}
	if !a.Required {
		h += " Optional."
	}
	return h
}

// roffNote is generatedNote as roff input, which is ASCII.
func roffNote() string { return nonASCII(generatedNote) }

// nonASCII writes every rune beyond ASCII as a roff \[uXXXX] escape.
func nonASCII(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 {
			b.WriteRune(r)
			continue
		}
		fmt.Fprintf(&b, `\[u%04X]`, r)
	}
	return b.String()
}

// roff escapes text for a roff line: backslashes, hyphens and runes beyond
// ASCII, and a leading dot or quote that would make the line a request.
func roff(s string) string { return safeLine(roffText(s)) }

// roffText escapes backslashes, hyphens and runes beyond ASCII, and makes
// line breaks spaces.
func roffText(s string) string {
	return nonASCII(strings.NewReplacer(`\`, `\e`, "-", `\-`, "\n", " ").Replace(s))
}

// manWidth is the widest line of the page: of its roff source, and of
// the page as man sets it on a terminal 80 columns wide.
const manWidth = 80

// manIndent is how far man indents a command's text (a .SS section's
// body) on a terminal.
const manIndent = 7

// fill is text as roff source for a filled paragraph: escaped, its line
// breaks and runs of spaces made one space (the formatter fills), and
// broken between words into lines of at most manWidth columns, each made
// safe from being read as a request.
func fill(text string) string {
	var b strings.Builder
	line := ""
	flush := func() {
		if line != "" {
			b.WriteString(safeLine(line) + "\n")
			line = ""
		}
	}
	for _, w := range strings.Fields(text) {
		w = roffText(w)
		if line != "" && len(line)+1+len(w) > manWidth {
			flush()
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	flush()
	return b.String()
}

// safeLine keeps a line of roff text from being read as a request: one
// starting with a dot or a quote gets the zero-width \& first.
func safeLine(l string) string {
	if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
		return `\&` + l
	}
	return l
}

// manDetail is a command's long help as roff: each paragraph (the text
// between blank lines) filled, so the page wraps to the terminal, and each
// run of indented lines (an example, a command to paste) set as it is,
// its lines kept whole, indented by two columns where they still fit in
// manWidth.
func manDetail(detail string) string {
	var b strings.Builder
	for _, para := range strings.Split(strings.TrimSpace(detail), "\n\n") {
		lines := strings.Split(para, "\n")
		for len(lines) > 0 {
			n := 1
			indented := isIndented(lines[0])
			for n < len(lines) && isIndented(lines[n]) == indented {
				n++
			}
			run := lines[:n]
			lines = lines[n:]
			if !indented {
				b.WriteString(".PP\n" + fill(strings.Join(run, " ")))
				continue
			}
			cut := commonIndent(run)
			// Indented by two where its longest line still fits.
			room := manWidth - manIndent
			for _, l := range run {
				room = min(room, manWidth-manIndent-utf8.RuneCountInString(l[cut:]))
			}
			fmt.Fprintf(&b, ".PP\n.RS %d\n.nf\n", max(min(room, 2), 0))
			for _, l := range run {
				b.WriteString(safeLine(roff(l[cut:])) + "\n")
			}
			b.WriteString(".fi\n.RE\n")
		}
	}
	return b.String()
}

// isIndented reports whether a line of long help starts with a space or a
// tab: part of an example, set as it is.
func isIndented(l string) bool { return strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") }

// commonIndent is how many leading blanks every line of lines has.
func commonIndent(lines []string) int {
	cut := -1
	for _, l := range lines {
		n := len(l) - len(strings.TrimLeft(l, " \t"))
		if cut < 0 || n < cut {
			cut = n
		}
	}
	return max(cut, 0)
}
