package main

import (
	"fmt"
	"io"

	"github.com/alecthomas/kong"
)

// commandGroups are the groups --help lists the commands under, in the
// order it lists them; each command's `group` tag names one.
func commandGroups() []kong.Group {
	return []kong.Group{
		{Key: "daily", Title: "Daily:"},
		{Key: "cleanup", Title: "Cleanup:"},
		{Key: "archives", Title: "Archives:"},
		{Key: "migration", Title: "Migration:"},
		{Key: "agents", Title: "Agents:"},
		{Key: "audit", Title: "Audit:"},
		{Key: "maintenance", Title: "Maintenance:"},
	}
}

// parserOptions are the options run parses a command line with: kong
// prints on stdout and stderr, and its exit (after --help or --version)
// unwinds to run as exitSignal.
func parserOptions(stdout, stderr io.Writer) []kong.Option {
	return append(cliOptions(),
		kong.Writers(stdout, stderr),
		kong.Exit(func(c int) { panic(exitSignal{c}) }),
		kong.Vars{"version": "custody " + buildVersion()},
		kong.UsageOnError(),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
	)
}

// HelpCmd prints the help of custody, or of the command its words name.
type HelpCmd struct {
	Command []string `arg:"" optional:"" name:"command" help:"The command, and its subcommand, whose help to print."`
}

// Help is the long help of help.
func (HelpCmd) Help() string {
	return `Prints exactly what --help prints: custody help is custody --help, and
custody help journal export is custody journal export --help. A word that
names no command is a usage error naming it.

EXIT STATUS: 0 printed, 1 error (a word that names no command).`
}

// Run prints the help. It parses the words against the whole command
// line, whatever model run parsed this one against, and kong's help ends
// the process as --help does (exit 0).
func (c *HelpCmd) Run(a *App) error {
	parser, err := kong.New(&CLI{}, parserOptions(a.Stdout, a.Stderr)...)
	if err != nil {
		return fmt.Errorf("internal: %w", err)
	}
	words := append(append([]string{}, c.Command...), "--help")
	if _, err := parser.Parse(words); err != nil {
		return &usageError{err}
	}
	return fmt.Errorf("internal: custody %v --help printed no help", c.Command)
}

// VersionCmd prints the version.
type VersionCmd struct{}

// Help is the long help of version.
func (VersionCmd) Help() string {
	return `Prints exactly what --version prints: custody and the version it was built
as (or, for a development build, the module version and the revision it
was built from). With --json the result is {"version": "..."}.

EXIT STATUS: 0 printed, 1 error.`
}

// versionResult is version's --json result.
type versionResult struct {
	Version string `json:"version"`
}

// Run prints the version.
func (c *VersionCmd) Run(a *App) error {
	v := buildVersion()
	a.done(versionResult{Version: v}, func(w io.Writer) { fmt.Fprintln(w, "custody "+v) })
	return nil
}

// Help and version only read.
func (*HelpCmd) access() access    { return reads }
func (*VersionCmd) access() access { return reads }
