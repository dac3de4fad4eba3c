package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/safefile"
	"github.com/custody-sh/custody/observe/writable"
	"github.com/custody-sh/custody/steps"
)

// SkillCmd prints or writes the agent skill.
type SkillCmd struct {
	Out   string `name:"out" placeholder:"DIR" help:"Write the skill's folder, DIR/custody (or DIR itself when it is named custody), only files whose bytes change, instead of printing the skill."`
	Check bool   `name:"check" help:"With --out: write nothing; exit 1 naming each file of the skill's folder that is missing or differs from what this custody generates."`
}

// Help is the long help of skill.
func (SkillCmd) Help() string {
	return `Generates the agent skill from the command line itself and the refusal
catalog, as a folder named custody (the skill's name): SKILL.md (its
frontmatter, the workflow an agent follows, how to read custody's output,
the exit codes, every command by name), the reference files it links and
an agent reads when it needs them (references/commands.md: every command's
arguments and flags; references/refusals.md: every refusal code with its
meaning and usual retry), and agents/openai.yaml (how an agent's interface
shows it). The output depends only on this custody: the same binary always
makes the same bytes.

Without --out it prints SKILL.md, then each reference file, each after a
line "==> PATH <==" naming it (as head(1) does), and writes nothing; with
--json the result holds them as skill and references. --out DIR writes the
folder DIR/custody, or DIR itself when its name is already custody: e.g.
custody skill --out .claude/skills (Claude Code) or --out .agents/skills
(Codex). A DIR that is itself another skill's folder (it holds a SKILL.md
but is not named custody) is refused, and so is a symlink, or anything but
a directory, where the folder or a folder in it goes: nothing is written
then. --check with --out compares instead, for CI: a copy written by an
older custody is stale.

EXIT STATUS: 0 printed, written or current, 1 error or a stale copy.`
}

// skillResult is skill's --json result.
type skillResult struct {
	// Skill is SKILL.md, when it was printed (no --out).
	Skill string `json:"skill,omitempty"`
	// References are the reference files SKILL.md links, when it was
	// printed, by path below the skill's folder.
	References []skillText `json:"references,omitempty"`
	// Files are the files of the skill's folder (--out): each written,
	// unchanged or current.
	Files []skillFile `json:"files,omitempty"`
}

// skillText is one printed reference file.
type skillText struct {
	Path string `json:"path"`
	Text string `json:"text"`
}

// skillFile is one file of the skill's folder and what skill did with it.
type skillFile struct {
	Path string `json:"path"`
	// Outcome is written, unchanged (the bytes were already these) or
	// current (--check found it up to date).
	Outcome string `json:"outcome"`
}

// Run prints, writes or checks the skill.
func (c *SkillCmd) Run(a *App) error {
	doc, err := wholeCLI()
	if err != nil {
		return err
	}
	files := skillFiles(doc)
	if c.Out == "" {
		if c.Check {
			return &usageError{errors.New("skill --check compares a written copy: name its directory with --out DIR")}
		}
		res := skillResult{Skill: files["SKILL.md"]}
		for _, r := range skillReferences() {
			res.References = append(res.References, skillText{Path: r.Path, Text: files[r.Path]})
		}
		a.done(res, func(w io.Writer) { printSkill(w, res) })
		return nil
	}
	folder, err := skillFolder(filepath.Clean(a.path(c.Out)))
	if err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	// Every folder and file is checked, and every file read and compared,
	// before anything is made or written: a refusal leaves everything as
	// it was.
	dirs := skillDirs(folder, names)
	if err := checkSkillDirs(dirs, false); err != nil {
		return err
	}
	same := map[string]bool{}
	for _, n := range names {
		p := filepath.Join(folder, filepath.FromSlash(n))
		if fi, err := os.Lstat(p); err == nil && !fi.Mode().IsRegular() {
			// CreateFile refuses it, naming what it is, before it creates
			// anything.
			f, err := steps.CreateFile(p, 0o644)
			if err == nil {
				f.Abort()
			} else {
				return outputError(err, p, "custody skill")
			}
		}
		got, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return &machine.Refusal{Code: machine.CodeUnsafeTarget, Path: p, Retry: "custody skill",
				Message: fmt.Sprintf("%s cannot be read (%v); nothing was written. Remove it or choose another --out", p, errors.Unwrap(err))}
		}
		same[n] = err == nil && bytes.Equal(got, []byte(files[n]))
	}
	var res skillResult
	var stale, write []string
	for _, n := range names {
		p := filepath.Join(folder, filepath.FromSlash(n))
		switch {
		case same[n] && c.Check:
			res.Files = append(res.Files, skillFile{Path: p, Outcome: "current"})
		case c.Check:
			stale = append(stale, p)
		case same[n]:
			res.Files = append(res.Files, skillFile{Path: p, Outcome: "unchanged"})
		default:
			write = append(write, n)
		}
	}
	if len(stale) > 0 {
		return &machine.Refusal{Code: machine.CodeGeneratedStale, Path: stale[0], Retry: "custody skill --out " + machine.QuoteArg(folder),
			Message: fmt.Sprintf("%s %s missing or not what this custody generates; nothing was written", strings.Join(stale, " and "), isAre(len(stale)))}
	}
	if len(write) > 0 {
		if err := checkSkillDirs(dirs, true); err != nil {
			return err
		}
	}
	for _, n := range write {
		p := filepath.Join(folder, filepath.FromSlash(n))
		if err := checkSkillDirs([]string{folder, filepath.Dir(p)}, false); err != nil {
			return err // a symlink put there since the check above
		}
		if err := steps.WriteFile(p, []byte(files[n]), 0o644); err != nil {
			return outputError(err, p, "custody skill")
		}
		res.Files = append(res.Files, skillFile{Path: p, Outcome: "written"})
	}
	slices.SortFunc(res.Files, func(x, y skillFile) int { return strings.Compare(x.Path, y.Path) })
	a.done(res, func(w io.Writer) {
		for _, f := range res.Files {
			fmt.Fprintf(w, "%s %s\n", f.Outcome, f.Path)
		}
	})
	return nil
}

// printSkill writes the printed skill: SKILL.md, then each reference
// file, each after a "==> PATH <==" line and files apart by a blank line,
// as head(1) prints several files.
func printSkill(w io.Writer, res skillResult) {
	fmt.Fprintf(w, "==> SKILL.md <==\n%s", res.Skill)
	for _, r := range res.References {
		fmt.Fprintf(w, "\n==> %s <==\n%s", r.Path, r.Text)
	}
}

// skillFolder is where --out DIR puts the skill: a folder named after
// the skill, since an agent finds a skill by its folder's name and the
// Agent Skills format requires it to equal the frontmatter's name. That
// is DIR itself when DIR is already named so, else DIR/custody. A DIR of
// another name that holds a SKILL.md is a skill's folder (another
// skill's, or one an older custody wrote its skill into under another
// name): writing below it would nest one skill in another, so it is
// refused, and so is a DIR that is not a directory.
func skillFolder(dir string) (string, error) {
	if filepath.Base(dir) == skillName {
		return dir, nil
	}
	folder := filepath.Join(dir, skillName)
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return "", &machine.Refusal{Code: machine.CodeUnsafeTarget, Path: dir, Retry: "custody skill",
			Message: fmt.Sprintf("--out %s is %s, not a directory; the skill is a folder, %s, written below the directory --out names, so nothing was written. Name a directory that holds skills, e.g. .claude/skills or .agents/skills", dir, steps.DescribeMode(fi.Mode()), folder)}
	}
	if _, err := os.Lstat(filepath.Join(dir, "SKILL.md")); err == nil {
		parent := filepath.Dir(dir)
		r := &machine.Refusal{Code: machine.CodeUnsafeTarget, Path: dir, Retry: "custody skill --out " + machine.QuoteArg(parent)}
		if skillNameIn(filepath.Join(dir, "SKILL.md")) == skillName {
			// An older custody wrote its skill straight into DIR.
			r.Message = fmt.Sprintf("%s holds custody's own SKILL.md, written straight into it by an older custody: a skill's folder must bear the skill's name, custody, not %s, so nothing was written. The retry writes %s beside it; then remove SKILL.md and agents/openai.yaml from %s (or, if %s is a directory of skills, remove them and run custody skill --out %s again)",
				dir, filepath.Base(dir), filepath.Join(parent, skillName), dir, dir, machine.QuoteArg(dir))
		} else {
			r.Message = fmt.Sprintf("%s holds a SKILL.md, so it is the folder of another skill, named %s; custody's skill must be a folder of its own named %s, and one written inside another skill's folder would not be found, so nothing was written. The retry writes %s beside it and leaves %s as it is",
				dir, filepath.Base(dir), skillName, filepath.Join(parent, skillName), dir)
		}
		return "", r
	}
	return folder, nil
}

// skillDirs is the skill's folder and every folder in it that holds one
// of the files names, parents first.
func skillDirs(folder string, names []string) []string {
	dirs := []string{folder}
	for _, n := range names {
		var walked []string
		for d := filepath.Dir(filepath.FromSlash(n)); d != "."; d = filepath.Dir(d) {
			walked = append(walked, filepath.Join(folder, d))
		}
		slices.Reverse(walked)
		for _, d := range walked {
			if !slices.Contains(dirs, d) {
				dirs = append(dirs, d)
			}
		}
	}
	return dirs
}

// checkSkillDirs checks the folders dirs (the skill's folder first, then the
// folders in it) as safefile.DirBelow checks every directory custody
// writes into: each must be a directory of its own, never a symlink, so
// the skill's files land in a folder that bears its name and nowhere
// else. With create it makes the missing ones (and the directories above
// the skill's folder, which are taken as they are); without, a missing
// folder is fine: it is made before anything is written in it.
func checkSkillDirs(dirs []string, create bool) error {
	root := filepath.Dir(dirs[0])
	if create {
		if err := os.MkdirAll(root, 0o755); err != nil {
			return skillDirError(err, dirs[0])
		}
	}
	for _, d := range dirs {
		err := safefile.DirBelow(root, d, create, 0o755)
		if !create && errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return skillDirError(err, d)
		}
	}
	return nil
}

// skillDirError is the refusal of a folder of the skill that is not a
// directory of its own or cannot be made.
func skillDirError(err error, d string) error {
	var linked *safefile.DirError
	if errors.As(err, &linked) {
		return &machine.Refusal{Code: machine.CodeUnsafeTarget, Path: linked.Path, Retry: "custody skill",
			Message: fmt.Sprintf("%s is %s, not a directory; the skill is written only into directories of its own, never through a symlink, so nothing was written and it was left as it is. Name the real directory with --out", linked.Path, linked.What)}
	}
	if _, ok := writable.Classify(err); ok {
		return outputError(err, d, "custody skill --out DIR")
	}
	return &machine.Refusal{Code: machine.CodeUnsafeTarget, Path: d, Retry: "custody skill",
		Message: fmt.Sprintf("%s cannot be made or examined (%v); nothing was written. Choose another --out", d, errors.Unwrap(err))}
}

// skillNameIn is the name in the frontmatter of the SKILL.md at p, or ""
// when it is not a regular file, cannot be read, is over 1 MiB (more than
// the agents load) or names none. It never reads through a symlink.
func skillNameIn(p string) string {
	b, err := safefile.Read(p, 1<<20)
	if err != nil {
		return ""
	}
	// The frontmatter block, then its name line (plain or double-quoted).
	fm := regexp.MustCompile(`\A---\r?\n((?s:.*?))\r?\n---\r?\n`).FindSubmatch(b)
	if fm == nil {
		return ""
	}
	m := regexp.MustCompile(`(?m)^name:[ \t]*"?([^"\r\n]*?)"?[ \t]*\r?$`).FindSubmatch(fm[1])
	if m == nil {
		return ""
	}
	return string(m[1])
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}
