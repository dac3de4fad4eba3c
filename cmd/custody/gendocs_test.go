//go:build unix

package main

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/custody-sh/custody/machine"
	"github.com/google/go-cmp/cmp"
)

var updateCLIDocs = flag.Bool("update-cli-docs", false, "rewrite docs/cli.md, docs/exit-codes.md and docs/custody.1 from the command line model")

// TestCLIDocsFresh fails when a file in docs/ drawn from the command line
// model (docs/cli.md, docs/exit-codes.md, docs/custody.1) no longer
// matches it.
func TestCLIDocsFresh(t *testing.T) {
	docs, err := generatedCLIDocs()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range docs {
		path := filepath.Join("..", "..", "docs", name)
		if *updateCLIDocs {
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != want {
			t.Errorf("docs/%s is stale. To update, run 'go generate ./...'.", name)
		}
	}
}

// TestGeneratedFilesAreMarked: every generated file says it is generated
// and not to be edited, ends with a newline, and is the same bytes when
// made twice.
func TestGeneratedFilesAreMarked(t *testing.T) {
	t.Parallel()
	app, err := cliModel()
	if err != nil {
		t.Fatal(err)
	}
	gen := func() map[string]string {
		d := describeCLI(app)
		out, err := generatedCLIDocs()
		if err != nil {
			t.Fatal(err)
		}
		for n, s := range skillFiles(d) {
			out["skill/"+n] = s
		}
		for sh, f := range completionScripts() {
			out["completion."+sh] = f(d)
		}
		return out
	}
	first := gen()
	if diff := cmp.Diff(first, gen()); diff != "" {
		t.Errorf("generated output differs between two runs (-first +second):\n%s", diff)
	}
	for name, s := range first {
		head := strings.Join(strings.SplitN(s, "\n", 8)[:min(7, strings.Count(s, "\n"))], "\n")
		note := generatedNote
		if strings.HasSuffix(name, ".1") {
			note = roffNote()
		}
		if !strings.Contains(head, note) {
			t.Errorf("%s: no %q line among its first lines:\n%s", name, generatedNote, head)
		}
		if !strings.HasSuffix(s, "\n") || strings.HasSuffix(s, "\n\n") {
			t.Errorf("%s does not end with exactly one newline", name)
		}
	}
}

// TestDocsListEveryCommand: every command the parser runs, hidden ones
// aside, is in cli.md, the man page, the skill (by name in SKILL.md, with
// its flags in references/commands.md) and the bash completion; every
// refusal code is in the skill's references/refusals.md and every exit
// code in SKILL.md.
func TestDocsListEveryCommand(t *testing.T) {
	t.Parallel()
	app, err := cliModel()
	if err != nil {
		t.Fatal(err)
	}
	d := describeCLI(app)
	docs, err := generatedCLIDocs()
	if err != nil {
		t.Fatal(err)
	}
	files := skillFiles(d)
	skill, commands, refusals := files["SKILL.md"], files["references/commands.md"], files["references/refusals.md"]
	bash := bashCompletion(d)
	cmds := visibleCommands(t, app.Node, nil)
	if len(cmds) < 20 {
		t.Fatalf("only %d commands: %v", len(cmds), cmds)
	}
	for _, c := range cmds {
		if !strings.Contains(docs["cli.md"], "\n### custody "+c+"\n") {
			t.Errorf("docs/cli.md has no section for custody %s", c)
		}
		if !strings.Contains(docs["custody.1"], "\n.SS "+roff("custody "+c)) {
			t.Errorf("docs/custody.1 has no section for custody %s", c)
		}
		if !strings.Contains(skill, "\n- `custody "+c) {
			t.Errorf("SKILL.md does not list custody %s", c)
		}
		if !strings.Contains(commands, "\n### `custody "+c) {
			t.Errorf("the skill's references/commands.md has no section for custody %s", c)
		}
		words := strings.Fields(c)
		parent := strings.Join(words[:len(words)-1], " ")
		if !strings.Contains(bash, "'"+parent+"/"+words[len(words)-1]+"'") {
			t.Errorf("the bash completion does not know custody %s", c)
		}
	}
	for _, code := range machine.SortedCodes() {
		if !strings.Contains(refusals, "| `"+string(code)+"` | "+mdCell(machine.Codes()[code])+" |") {
			t.Errorf("the skill's references/refusals.md lacks refusal code %s with its meaning", code)
		}
	}
	for _, e := range exitCodeDocs() {
		for name, s := range map[string]string{"SKILL.md": skill, "exit-codes.md": docs["exit-codes.md"]} {
			if !strings.Contains(s, "| "+strconv.Itoa(e.Code)+" | ") {
				t.Errorf("%s lacks exit code %d", name, e.Code)
			}
		}
	}
}

// visibleCommands is every runnable command below n that is not hidden,
// read from the kong model directly (not through describeCLI).
func visibleCommands(t *testing.T, n *kong.Node, words []string) []string {
	t.Helper()
	var out []string
	leaf := true
	for _, c := range n.Children {
		if c.Type != kong.CommandNode {
			continue
		}
		leaf = false
		if !c.Hidden {
			out = append(out, visibleCommands(t, c, append(slices.Clip(words), c.Name))...)
		}
	}
	if leaf && len(words) > 0 {
		out = append(out, strings.Join(words, " "))
	}
	return out
}

// TestExitCodeDocsCoverTheCodes: the documented exit codes are exactly the
// ones output.go defines.
func TestExitCodeDocsCoverTheCodes(t *testing.T) {
	t.Parallel()
	var got []int
	for _, e := range exitCodeDocs() {
		got = append(got, e.Code)
	}
	if diff := cmp.Diff([]int{exitOK, exitError, exitPlanned, exitPending, exitHangup, exitInterrupt, exitTerminated}, got); diff != "" {
		t.Errorf("exit codes documented (-defined +documented):\n%s", diff)
	}
}

// hiddenCLI is a command line with a hidden command and a hidden flag.
type hiddenCLI struct {
	Shown struct {
		Level  string `name:"level" enum:"low,high" default:"low" help:"How much."`
		Secret bool   `name:"secret" hidden:"" help:"Not for people."`
		Group  struct {
			Leaf struct {
				File string `arg:"" help:"A file."`
			} `cmd:"" help:"A nested command."`
		} `cmd:"" help:"A group."`
	} `cmd:"" help:"A command."`
	Internal struct{} `cmd:"" hidden:"" help:"A hidden command."`
}

// TestDescribeCLILeavesHiddenOut: hidden commands and flags reach no
// generated file; nested commands and enum values do.
func TestDescribeCLILeavesHiddenOut(t *testing.T) {
	t.Parallel()
	parser, err := kong.New(&hiddenCLI{}, kong.Name("x"))
	if err != nil {
		t.Fatal(err)
	}
	d := describeCLI(parser.Model)
	var paths []string
	for _, c := range all(d.Commands) {
		paths = append(paths, c.Path)
	}
	if diff := cmp.Diff([]string{"shown", "shown group", "shown group leaf"}, paths); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
	for name, s := range map[string]string{"bash": bashCompletion(d), "zsh": zshCompletion(d), "fish": fishCompletion(d), "man": manPage(d), "md": cliMarkdown(d)} {
		if strings.Contains(s, "internal") || strings.Contains(s, "secret") {
			t.Errorf("%s shows a hidden command or flag:\n%s", name, s)
		}
		if !strings.Contains(s, "high") {
			t.Errorf("%s lacks the enum value high:\n%s", name, s)
		}
	}
}

// TestSkillNextStepsCoverEveryCode: every refusal code has a usual retry
// in the skill, none is listed that machine lacks, and every custody
// command a retry names is one the command line has.
func TestSkillNextStepsCoverEveryCode(t *testing.T) {
	t.Parallel()
	next := nextSteps()
	for _, c := range machine.SortedCodes() {
		if strings.TrimSpace(next[c]) == "" {
			t.Errorf("refusal code %s has no usual retry in nextSteps (cmd/custody/skill_retries.go)", c)
		}
	}
	cmds := rtCommands(t)
	for c, step := range next {
		if _, ok := machine.Codes()[c]; !ok {
			t.Errorf("nextSteps lists %s, which machine does not", c)
		}
		cmd, _, _ := strings.Cut(step, " (")
		for _, part := range strings.Split(cmd, "&&") {
			words := strings.Fields(part)
			if len(words) == 0 || words[0] != "custody" {
				continue
			}
			words = words[1:]
			for len(words) > 0 && strings.HasPrefix(words[0], "-") {
				// A global flag and, unless it is a switch, its value.
				if words[0] == "-C" || words[0] == "--lock-timeout" {
					words = words[1:]
				}
				words = words[1:]
			}
			if len(words) > 0 && words[0] == strings.ToUpper(words[0]) {
				continue // custody COMMAND: whatever was run
			}
			if !slices.ContainsFunc(cmds, func(known string) bool {
				return slices.Equal(strings.Fields(known), words[:min(len(words), len(strings.Fields(known)))])
			}) && len(words) > 0 {
				t.Errorf("%s: the retry %q names no custody command (%v)", c, step, cmds)
			}
		}
	}
}
