package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/alecthomas/kong"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/writable"
	"github.com/custody-sh/custody/steps"
)

// SkillCmd prints or writes the agent skill.
type SkillCmd struct {
	Out   string `name:"out" placeholder:"DIR" help:"Write SKILL.md and agents/openai.yaml below DIR (only files whose bytes change), instead of printing SKILL.md."`
	Check bool   `name:"check" help:"With --out: write nothing; exit 1 naming each file below DIR that is missing or differs from what this custody generates."`
}

// Help is the long help of skill.
func (SkillCmd) Help() string {
	return `Generates the agent skill from the command line itself and the refusal
catalog: SKILL.md (its frontmatter, the workflow an agent follows, the exit
codes, every command and flag, every refusal code with its meaning and
usual retry) and agents/openai.yaml (how an agent's interface shows it).
The output depends only on this custody: the same binary always makes the
same bytes.

Without --out it prints SKILL.md and writes nothing. --out DIR writes both
files below DIR, e.g. custody skill --out .claude/skills/custody (Claude
Code) or --out .agents/skills/custody (Codex). --check with --out compares
instead, for CI: a copy written by an older custody is stale.

EXIT STATUS: 0 printed, written or current, 1 error or a stale copy.`
}

// skillResult is skill's --json result.
type skillResult struct {
	// Skill is SKILL.md, when it was printed (no --out).
	Skill string `json:"skill,omitempty"`
	// Files are the files below --out: each written, unchanged or current.
	Files []skillFile `json:"files,omitempty"`
}

// skillFile is one file below --out and what skill did with it.
type skillFile struct {
	Path string `json:"path"`
	// Outcome is written, unchanged (the bytes were already these) or
	// current (--check found it up to date).
	Outcome string `json:"outcome"`
}

// Run prints, writes or checks the skill.
func (c *SkillCmd) Run(a *App, k *kong.Context) error {
	files := skillFiles(describeCLI(k.Model))
	if c.Out == "" {
		if c.Check {
			return &usageError{errors.New("skill --check compares a written copy: name its directory with --out DIR")}
		}
		md := files["SKILL.md"]
		a.done(skillResult{Skill: md}, func(w io.Writer) { fmt.Fprint(w, md) })
		return nil
	}
	dir := a.path(c.Out)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	// Every target is checked before any is written: a refusal leaves
	// the directory as it was.
	for _, n := range names {
		p := filepath.Join(dir, filepath.FromSlash(n))
		if fi, err := os.Lstat(p); err == nil && !fi.Mode().IsRegular() {
			// CreateFile refuses it, naming what it is, before it creates
			// anything.
			f, err := steps.CreateFile(p, 0o644)
			if err == nil {
				f.Abort()
				continue // replaced meanwhile by a regular file
			}
			return outputError(err, p, "custody skill")
		}
	}
	// Every target is read and compared before any is written, so a file
	// that cannot be read refuses with nothing written.
	same := map[string]bool{}
	for _, n := range names {
		p := filepath.Join(dir, filepath.FromSlash(n))
		got, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return &machine.Refusal{Code: machine.CodeUnsafeTarget, Path: p, Retry: "custody skill",
				Message: fmt.Sprintf("%s cannot be read (%v); nothing was written. Remove it or choose another --out", p, errors.Unwrap(err))}
		}
		same[n] = err == nil && bytes.Equal(got, []byte(files[n]))
	}
	var res skillResult
	var stale []string
	for _, n := range names {
		p := filepath.Join(dir, filepath.FromSlash(n))
		same := same[n]
		switch {
		case same && c.Check:
			res.Files = append(res.Files, skillFile{Path: p, Outcome: "current"})
		case c.Check:
			stale = append(stale, p)
		case same:
			res.Files = append(res.Files, skillFile{Path: p, Outcome: "unchanged"})
		default:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				if _, ok := writable.Classify(err); ok {
					return outputError(err, filepath.Dir(p), "custody skill --out DIR")
				}
				return &machine.Refusal{Code: machine.CodeUnsafeTarget, Path: filepath.Dir(p), Retry: "custody skill",
					Message: fmt.Sprintf("%s cannot be made (%v); choose another --out", filepath.Dir(p), errors.Unwrap(err))}
			}
			if err := steps.WriteFile(p, []byte(files[n]), 0o644); err != nil {
				return outputError(err, p, "custody skill")
			}
			res.Files = append(res.Files, skillFile{Path: p, Outcome: "written"})
		}
	}
	if len(stale) > 0 {
		return &machine.Refusal{Code: machine.CodeGeneratedStale, Path: stale[0], Retry: "custody skill --out " + machine.QuoteArg(dir),
			Message: fmt.Sprintf("%s %s missing or not what this custody generates; nothing was written", strings.Join(stale, " and "), isAre(len(stale)))}
	}
	a.done(res, func(w io.Writer) {
		for _, f := range res.Files {
			fmt.Fprintf(w, "%s %s\n", f.Outcome, f.Path)
		}
	})
	return nil
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}
