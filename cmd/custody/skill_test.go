package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestSkillFrontmatter: SKILL.md opens with YAML frontmatter holding
// exactly a name agents accept (lowercase letters, digits, hyphens) and a
// one-line, quoted description within 1,024 characters.
func TestSkillFrontmatter(t *testing.T) {
	t.Parallel()
	app, err := cliModel()
	if err != nil {
		t.Fatal(err)
	}
	md := skillFiles(describeCLI(app))["SKILL.md"]
	m := regexp.MustCompile(`\A---\nname: ([^\n]*)\ndescription: ([^\n]*)\n---\n`).FindStringSubmatch(md)
	if m == nil {
		t.Fatalf("SKILL.md does not open with name and description frontmatter:\n%s", md[:min(300, len(md))])
	}
	if !regexp.MustCompile(`\A[a-z0-9-]{1,64}\z`).MatchString(m[1]) {
		t.Errorf("name %q is not lowercase letters, digits and hyphens", m[1])
	}
	desc, err := strconv.Unquote(m[2])
	if err != nil || desc != skillDescription || len(desc) > 1024 {
		t.Errorf("description %s: not the quoted skillDescription within 1,024 characters (%v)", m[2], err)
	}
}

// TestSkillOpenAIYAML: agents/openai.yaml is the interface block with
// quoted values and the implicit-invocation policy, and its default
// prompt names the skill.
func TestSkillOpenAIYAML(t *testing.T) {
	t.Parallel()
	y := skillOpenAIYAML()
	want := map[string]bool{"interface:": true, "policy:": true, "  allow_implicit_invocation: true": true}
	quoted := regexp.MustCompile(`\A  (display_name|short_description|default_prompt): ("(?:[^"\\]|\\.)*")\z`)
	seen := map[string]string{}
	for _, l := range strings.Split(strings.TrimSuffix(y, "\n"), "\n") {
		switch m := quoted.FindStringSubmatch(l); {
		case strings.HasPrefix(l, "# "):
		case want[l]:
			seen[l] = "yes"
		case m != nil:
			v, err := strconv.Unquote(m[2])
			if err != nil {
				t.Errorf("%s: %v", l, err)
			}
			seen[m[1]] = v
		default:
			t.Errorf("unexpected line %q in agents/openai.yaml:\n%s", l, y)
		}
	}
	for _, k := range []string{"interface:", "policy:", "  allow_implicit_invocation: true", "display_name", "short_description", "default_prompt"} {
		if seen[k] == "" {
			t.Errorf("agents/openai.yaml lacks %s:\n%s", k, y)
		}
	}
	if n := len(seen["short_description"]); n < 25 || n > 64 {
		t.Errorf("short_description is %d characters, not 25 to 64", n)
	}
	if !strings.Contains(seen["default_prompt"], "$"+skillName) {
		t.Errorf("default_prompt %q does not name $%s", seen["default_prompt"], skillName)
	}
}
