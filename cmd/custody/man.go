package main

import (
	"fmt"
	"strings"
)

// manPage renders custody(1) in roff (man macros) from d: every command,
// its arguments and flags, and the exit codes. No date or version goes in,
// so the page depends only on the model.
func manPage(d cliDoc) string {
	var b strings.Builder
	fmt.Fprintf(&b, `.\" %s; run "custody man" or "go generate ./..." to make it again.`+"\n", roffNote())
	fmt.Fprintf(&b, ".TH %s 1 \"\" \"%s\" \"User Commands\"\n", strings.ToUpper(d.Name), d.Name)
	b.WriteString(".SH NAME\n")
	fmt.Fprintf(&b, "%s \\- %s\n", d.Name, roff(strings.TrimPrefix(d.Description, d.Name+" ")))
	b.WriteString(".SH SYNOPSIS\n")
	fmt.Fprintf(&b, ".B %s\n[\\fIflags\\fR] \\fIcommand\\fR [\\fIargs\\fR]\n", d.Name)
	b.WriteString(".SH DESCRIPTION\n")
	fmt.Fprintf(&b, "%s\n", roff(d.Description))
	b.WriteString(".SH GLOBAL FLAGS\n")
	for _, f := range d.Globals {
		manFlag(&b, f)
	}
	b.WriteString(".SH COMMANDS\n")
	for _, c := range all(d.Commands) {
		fmt.Fprintf(&b, ".SS %s\n", roff(c.Usage(d.Name)))
		fmt.Fprintf(&b, "%s\n", roff(c.Help))
		if c.Detail != "" {
			b.WriteString(".PP\n.nf\n")
			for _, l := range strings.Split(c.Detail, "\n") {
				fmt.Fprintf(&b, "%s\n", roffLine(l))
			}
			b.WriteString(".fi\n")
		}
		for _, a := range c.Args {
			fmt.Fprintf(&b, ".TP\n.I %s\n%s\n", roff("<"+a.Name+">"), roff(argHelp(a)))
		}
		for _, f := range c.Flags {
			manFlag(&b, f)
		}
	}
	b.WriteString(".SH EXIT STATUS\n")
	for _, e := range exitCodeDocs() {
		fmt.Fprintf(&b, ".TP\n.B %d\n%s\n", e.Code, roff(strings.ReplaceAll(e.Meaning, "`", "")))
	}
	b.WriteString(".SH SEE ALSO\n")
	b.WriteString(".BR git-worktree (1)\n")
	return b.String()
}

func manFlag(b *strings.Builder, f flagDoc) {
	fmt.Fprintf(b, ".TP\n.B %s\n%s\n", roff(f.Spelling()), roff(strings.ReplaceAll(flagHelp(f), "`", "")))
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
func roff(s string) string {
	s = nonASCII(strings.NewReplacer(`\`, `\e`, "-", `\-`, "\n", " ").Replace(s))
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

// roffLine is roff for one line of no-fill text; an empty line stays one.
func roffLine(s string) string {
	if s == "" {
		return ""
	}
	return roff(s)
}
