package main

import (
	"fmt"
	"strings"
)

// generatedCLIDocs is every file in docs/ drawn from the command line
// model, by name: TestCLIDocsFresh compares them with docs/ and
// `go generate ./...` rewrites them.
func generatedCLIDocs() (map[string]string, error) {
	app, err := cliModel()
	if err != nil {
		return nil, err
	}
	d := describeCLI(app)
	return map[string]string{
		"cli.md":        cliMarkdown(d),
		"exit-codes.md": exitCodesMarkdown(),
		"custody.1":     manPage(d),
	}, nil
}

// regenerateDocs is the line a generated file in docs/ opens with.
func regenerateDocs(from string) string {
	return fmt.Sprintf("This file is %s. It is drawn from %s; `go generate ./...` updates it.", generatedNote, from)
}

// cliMarkdown renders docs/cli.md: every command with its synopsis, help
// and flags.
func cliMarkdown(d cliDoc) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# The %s command line\n\n", d.Name)
	fmt.Fprintf(&b, "%s\n\n", regenerateDocs("the kong model in cmd/custody"))
	fmt.Fprintf(&b, "%s\n\n", d.Description)
	b.WriteString("## Global flags\n\nEvery command takes these.\n\n")
	flagTable(&b, d.Globals)
	b.WriteString("\n## Commands\n\n")
	for _, c := range all(d.Commands) {
		fmt.Fprintf(&b, "%s- [`%s %s`](#%s) — %s\n", strings.Repeat("  ", strings.Count(c.Path, " ")), d.Name, c.Path, anchor(d.Name+" "+c.Path), c.Help)
	}
	for _, c := range all(d.Commands) {
		fmt.Fprintf(&b, "\n### %s %s\n\n```\n%s\n```\n\n%s\n", d.Name, c.Path, c.Usage(d.Name), c.Help)
		if c.Detail != "" {
			fmt.Fprintf(&b, "\n```text\n%s\n```\n", c.Detail)
		}
		if len(c.Children) > 0 {
			b.WriteString("\nCommands:\n\n")
			for _, s := range c.Children {
				fmt.Fprintf(&b, "- [`%s %s`](#%s) — %s\n", d.Name, s.Path, anchor(d.Name+" "+s.Path), s.Help)
			}
		}
		if len(c.Args) > 0 {
			b.WriteString("\n| argument | help |\n|---|---|\n")
			for _, a := range c.Args {
				help := a.Help
				if len(a.Enum) > 0 {
					help += " One of: " + backticked(a.Enum) + "."
				}
				if !a.Required {
					help += " Optional."
				}
				fmt.Fprintf(&b, "| `<%s>` | %s |\n", a.Name, mdCell(help))
			}
		}
		if len(c.Flags) > 0 {
			b.WriteString("\n")
			flagTable(&b, c.Flags)
		}
	}
	return b.String()
}

// flagTable writes a markdown table of fs.
func flagTable(b *strings.Builder, fs []flagDoc) {
	b.WriteString("| flag | help |\n|---|---|\n")
	for _, f := range fs {
		fmt.Fprintf(b, "| `%s` | %s |\n", f.Spelling(), mdCell(flagHelp(f)))
	}
}

// flagHelp is the flag's help with its default and its values.
func flagHelp(f flagDoc) string {
	h := f.Help
	if len(f.Enum) > 0 {
		h += " One of: " + backticked(f.Enum) + "."
	}
	if f.Default != "" {
		h += " Default: `" + f.Default + "`."
	}
	if f.Repeated {
		h += " May be repeated."
	}
	if f.Required {
		h += " Required."
	}
	return h
}

func backticked(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = "`" + w + "`"
	}
	return strings.Join(q, ", ")
}

// mdCell makes s fit one markdown table cell.
func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// anchor is the heading anchor GitHub gives "### text".
func anchor(text string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// exitCodesMarkdown renders docs/exit-codes.md from exitCodeDocs.
func exitCodesMarkdown() string {
	var b strings.Builder
	b.WriteString("# Exit codes\n\n")
	fmt.Fprintf(&b, "%s\n\n", regenerateDocs("cmd/custody/gendocs_exit_codes.go"))
	notes := exitCodeNotes()
	fmt.Fprintf(&b, "%s\n\n", notes[0])
	b.WriteString("| code | meaning |\n|---|---|\n")
	for _, e := range exitCodeDocs() {
		fmt.Fprintf(&b, "| %d | %s |\n", e.Code, mdCell(e.Meaning))
	}
	for _, n := range notes[1:] {
		fmt.Fprintf(&b, "\n%s\n", n)
	}
	return b.String()
}
