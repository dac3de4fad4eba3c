package main

import (
	"fmt"
	"strings"

	"github.com/custody-sh/custody/machine"
)

// skillName is the skill's name: its directory, and $custody in prompts.
const skillName = "custody"

// skillDescription is the frontmatter description: what the skill is for
// and when an agent should use it.
const skillDescription = "Create, finish and clean up git worktrees with custody, which removes a tree only with proof that nothing in it is lost. Use when starting work in a new worktree, when done with one, or when cleaning up worktrees: never delete a worktree with rm or git worktree remove."

// skillFiles renders the skill from the command line model d and the
// refusal catalog, by path below the skill's directory. The output
// depends on nothing else: no time, no version, no machine.
func skillFiles(d cliDoc) map[string]string {
	return map[string]string{
		"SKILL.md":           skillMarkdown(d),
		"agents/openai.yaml": skillOpenAIYAML(),
	}
}

// skillMarkdown is SKILL.md.
func skillMarkdown(d cliDoc) string {
	var b strings.Builder
	fmt.Fprintf(&b, "---\nname: %s\ndescription: %s\n---\n\n", skillName, yamlQuote(skillDescription))
	fmt.Fprintf(&b, "<!-- %s: made by `%s skill --out DIR` from the command line itself. -->\n\n", generatedNote, d.Name)
	fmt.Fprintf(&b, "# %s\n\n%s\n\n", d.Name, d.Description)
	b.WriteString(`## The workflow to follow

1. **Start** work in a tree of its own: ` + "`custody new NAME`" + ` prints the new worktree's
   path (with ` + "`--json`" + `, ` + "`result.path`" + ` and its id ` + "`result.id`" + `); work there.
2. **Publish** what you made: commit, and push the branch (` + "`git push -u origin HEAD`" + `).
   custody removes a tree only when every commit is on a ref a remote advertises, or archived.
3. **Finish** the tree when you are done with it: ` + "`custody finish`" + ` inside it (or
   ` + "`custody finish ID`" + `). An active tree is never removed.
4. **Plan**, then **apply**: ` + "`custody plan -o plan.json --json`" + ` assesses every finished
   tree and writes nothing but the plan; read it, then ` + "`custody apply plan.json --json`" + `
   removes exactly the items the plan proves safe, refusing any that changed since.
5. **Never** delete a worktree yourself (` + "`rm -rf`" + `, ` + "`git worktree remove`" + `, ` + "`git worktree prune`" + `):
   that skips the proof that nothing is lost.
6. After an interruption (a killed command, a crash), run ` + "`custody resume`" + `.

## Reading what custody says

- Pass ` + "`--json`" + ` whenever you read the output: exactly one envelope, on stdout for
  exit 0, 2 and 3 (` + "`{\"version\":1,\"ok\":true,\"command\":…,\"result\":…}`" + `), on stderr for
  exit 1 (` + "`{\"version\":1,\"ok\":false,\"error\":{\"code\",\"message\",\"path\",\"retry\"}}`" + `).
- A kept tree is not a failure: ` + "`plan`" + ` exits 0 whenever it made a plan, and each kept
  item carries a refusal ` + "`{code, message, path, retry}`" + `.
- ` + "`retry`" + ` is a command line to paste as it is, once what the message names is
  settled. Do not invent another: if the retry is ` + "`custody plan`" + `, fix what the message
  says, then plan again. Codes are stable; match on them, not on messages.
- Nothing you are refused has changed anything: act on the refusal, never around it.

`)
	b.WriteString("## Exit codes\n\n| code | meaning |\n|---|---|\n")
	for _, e := range exitCodeDocs() {
		fmt.Fprintf(&b, "| %d | %s |\n", e.Code, mdCell(e.Meaning))
	}
	b.WriteString("\n## Global flags\n\n")
	flagTable(&b, d.Globals)
	fmt.Fprintf(&b, "\n## Commands\n\n`%s COMMAND --help` gives a command's long help and its EXIT STATUS.\n", d.Name)
	for _, c := range leaves(d.Commands) {
		fmt.Fprintf(&b, "\n### `%s`\n\n%s\n", c.Usage(d.Name), c.Help)
		for _, a := range c.Args {
			fmt.Fprintf(&b, "- `<%s>`: %s\n", a.Name, strings.TrimSpace(argHelp(a)))
		}
		for _, f := range c.Flags {
			fmt.Fprintf(&b, "- `%s`: %s\n", f.Spelling(), flagHelp(f))
		}
	}
	b.WriteString("\n## Refusal codes\n\nEach refusal names the exact tree, path or commit; its `retry` is the command to run\nonce what it names is settled. The usual retry (capitals are what the refusal fills in):\n\n")
	b.WriteString("| code | meaning | usual retry |\n|---|---|---|\n")
	codes, next := machine.Codes(), nextSteps()
	for _, c := range machine.SortedCodes() {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", c, mdCell(codes[c]), mdCell(retryCell(next[c])))
	}
	return b.String()
}

// skillOpenAIYAML is agents/openai.yaml: how an agent's interface shows
// and invokes the skill.
func skillOpenAIYAML() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s: made by `custody skill --out DIR`.\n", generatedNote)
	b.WriteString("interface:\n")
	fmt.Fprintf(&b, "  display_name: %s\n", yamlQuote(skillName))
	fmt.Fprintf(&b, "  short_description: %s\n", yamlQuote("Make and retire git worktrees without losing work"))
	fmt.Fprintf(&b, "  default_prompt: %s\n", yamlQuote("Use $"+skillName+" to make a worktree for this task, and to finish and clean it up safely when done."))
	b.WriteString("policy:\n  allow_implicit_invocation: true\n")
	return b.String()
}

// yamlQuote is s as a double-quoted YAML scalar.
func yamlQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

// retryCell renders a next step: its command as code, then any note in
// parentheses after it as text; a step that is no command stays text.
func retryCell(step string) string {
	cmd, note := step, ""
	if i := strings.Index(step, " ("); i > 0 && strings.HasSuffix(step, ")") {
		cmd, note = step[:i], step[i:]
	}
	if !isCommand(cmd) {
		return step
	}
	return "`" + cmd + "`" + note
}

// isCommand reports whether a next step starts with a command to run.
func isCommand(step string) bool {
	for _, p := range []string{"custody ", "git ", "mv "} {
		if strings.HasPrefix(step, p) {
			return true
		}
	}
	return false
}
