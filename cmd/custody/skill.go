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

// skillBodyBudget is the most tokens SKILL.md's body (what follows its
// frontmatter) may hold, as skillTokens estimates them: the Agent Skills
// format loads the whole body when the skill is used and recommends under
// 5,000 tokens, with longer material in reference files read on demand.
// TestSkillBodyWithinBudget fails past it.
const skillBodyBudget = 5000

// skillTokens estimates the tokens of s as its bytes divided by 3.5,
// rounded up. Measured on the skill's own files, byte-pair tokenizers
// give one token for every 3.6 to 4 bytes, so this estimate is over, not
// under, the count (decision 0238).
func skillTokens(s string) int { return (2*len(s) + 6) / 7 }

// skillReference is one reference file beside SKILL.md: its path below
// the skill's folder, when an agent reads it, and how it is made.
type skillReference struct {
	Path   string
	When   string
	render func(cliDoc) string
}

// skillReferences are the reference files, in the order SKILL.md lists
// them. The body links each; an agent reads one only when it needs it.
func skillReferences() []skillReference {
	return []skillReference{
		{"references/commands.md", "the global flags, and every command with its arguments and flags", skillCommandsMarkdown},
		{"references/refusals.md", "every refusal code, what it means and its usual retry", func(cliDoc) string { return skillRefusalsMarkdown() }},
	}
}

// skillFiles renders the skill from the command line model d and the
// refusal catalog, by path below the skill's folder. The output depends
// on nothing else: no time, no version, no machine.
func skillFiles(d cliDoc) map[string]string {
	files := map[string]string{
		"SKILL.md":           skillMarkdown(d),
		"agents/openai.yaml": skillOpenAIYAML(),
	}
	for _, r := range skillReferences() {
		files[r.Path] = r.render(d)
	}
	return files
}

// skillLink is a markdown link to a reference file, relative to SKILL.md.
func skillLink(path string) string { return "[" + path + "](" + path + ")" }

// skillMarkdown is SKILL.md: what an agent needs on every use (the
// workflow, how to read custody's output, the exit codes, the commands by
// name); everything longer is in the reference files it links.
func skillMarkdown(d cliDoc) string {
	refs := skillReferences()
	commands, refusals := skillLink(refs[0].Path), skillLink(refs[1].Path)
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
- A code you do not know is in ` + refusals + `: find its row by the code in backticks.

`)
	b.WriteString("## Exit codes\n\n| code | meaning |\n|---|---|\n")
	for _, e := range exitCodeDocs() {
		fmt.Fprintf(&b, "| %d | %s |\n", e.Code, mdCell(e.Meaning))
	}
	fmt.Fprintf(&b, "\n## Commands\n\n`%s COMMAND --help` gives a command's long help and its EXIT STATUS; %s has every command's arguments and flags, and the global flags.\n\n", d.Name, commands)
	for _, c := range leaves(d.Commands) {
		fmt.Fprintf(&b, "- `%s`: %s\n", c.Usage(d.Name), c.Help)
	}
	b.WriteString("\n## Reference files\n\nRead one only when you need what it holds:\n\n")
	for _, r := range refs {
		fmt.Fprintf(&b, "- %s: %s.\n", skillLink(r.Path), r.When)
	}
	return b.String()
}

// skillReferenceHead opens a reference file: the generated note, its
// title, and what it is for.
func skillReferenceHead(b *strings.Builder, title, about string) {
	fmt.Fprintf(b, "<!-- %s: made by `custody skill --out DIR` from the command line itself. -->\n\n", generatedNote)
	fmt.Fprintf(b, "# %s\n\n%s\n", title, about)
}

// skillCommandsMarkdown is references/commands.md: the global flags and
// every command with its arguments and flags.
func skillCommandsMarkdown(d cliDoc) string {
	var b strings.Builder
	skillReferenceHead(&b, d.Name+" commands", fmt.Sprintf("Every command, sorted by name, with its arguments and flags. `%s COMMAND --help` gives a command's long help and its EXIT STATUS.", d.Name))
	b.WriteString("\n## Global flags\n\nEvery command takes these.\n\n")
	flagTable(&b, d.Globals)
	b.WriteString("\n## Commands\n")
	for _, c := range leaves(d.Commands) {
		fmt.Fprintf(&b, "\n### `%s`\n\n%s\n", c.Usage(d.Name), c.Help)
		for _, a := range c.Args {
			fmt.Fprintf(&b, "- `<%s>`: %s\n", a.Name, strings.TrimSpace(argHelp(a)))
		}
		for _, f := range c.Flags {
			fmt.Fprintf(&b, "- `%s`: %s\n", f.Spelling(), flagHelp(f))
		}
	}
	return b.String()
}

// skillRefusalsMarkdown is references/refusals.md: every refusal code
// with its meaning and usual retry.
func skillRefusalsMarkdown() string {
	var b strings.Builder
	skillReferenceHead(&b, "custody refusal codes", "Each refusal names the exact tree, path or commit; its `retry` is the command to run\nonce what it names is settled. Run that retry, not the one below: this table shows the usual\nretry of each code, capitals standing for what the refusal fills in.")
	b.WriteString("\n| code | meaning | usual retry |\n|---|---|---|\n")
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
