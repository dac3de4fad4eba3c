package main

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestSkillFrontmatter: SKILL.md opens with YAML frontmatter holding
// exactly a name the Agent Skills format accepts (1 to 64 lowercase
// letters, digits and single hyphens inside, neither first nor last), the
// skill's own name, and a one-line, quoted description within 1,024
// characters without angle brackets (Codex's validator refuses them).
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
	if !regexp.MustCompile(`\A[a-z0-9]+(-[a-z0-9]+)*\z`).MatchString(m[1]) || len(m[1]) > 64 || m[1] != skillName {
		t.Errorf("name %q is not %q, or not 1 to 64 lowercase letters, digits and single hyphens inside", m[1], skillName)
	}
	desc, err := strconv.Unquote(m[2])
	if err != nil || desc != skillDescription || len(desc) > 1024 || strings.ContainsAny(desc, "<>") {
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

// skillBody is SKILL.md without its frontmatter: what an agent loads when
// it uses the skill.
func skillBody(t *testing.T, md string) string {
	t.Helper()
	m := regexp.MustCompile(`\A---\n(?s:.*?)\n---\n`).FindStringIndex(md)
	if m == nil {
		t.Fatalf("SKILL.md has no frontmatter:\n%s", md[:min(300, len(md))])
	}
	return md[m[1]:]
}

// TestSkillBodyWithinBudget: SKILL.md's body stays within the token
// budget (skillTokens, an estimate over byte-pair tokenizers' counts) and
// the format's 500 lines; what does not fit is in the reference files.
func TestSkillBodyWithinBudget(t *testing.T) {
	t.Parallel()
	app, err := cliModel()
	if err != nil {
		t.Fatal(err)
	}
	body := skillBody(t, skillFiles(describeCLI(app))["SKILL.md"])
	if n := skillTokens(body); n > skillBodyBudget {
		t.Errorf("SKILL.md's body is about %d tokens (%d bytes / 3.5), over the budget of %d: move detail into a reference file (skillReferences)", n, len(body), skillBodyBudget)
	}
	if n := strings.Count(body, "\n"); n > 500 {
		t.Errorf("SKILL.md's body is %d lines, over 500", n)
	}
	// The estimate never counts fewer tokens than bytes/4, the usual
	// rule of thumb, and counts the bytes, not the runes.
	for _, s := range []string{"", "a", strings.Repeat("x", 4000), strings.Repeat("—", 1000), body} {
		if got, floor := skillTokens(s), (len(s)+3)/4; got < floor {
			t.Errorf("skillTokens of %d bytes = %d, under bytes/4 = %d", len(s), got, floor)
		}
	}
}

// mdLink is a markdown link's target.
var mdLink = regexp.MustCompile(`\]\(([^()\s]*)\)`)

// TestSkillLinksResolve: every relative link in SKILL.md names a
// reference file the skill writes beside it, every reference file is
// linked from SKILL.md, and the reference files link no further (the
// format keeps references one level deep). No link leaves the folder.
func TestSkillLinksResolve(t *testing.T) {
	t.Parallel()
	app, err := cliModel()
	if err != nil {
		t.Fatal(err)
	}
	files := skillFiles(describeCLI(app))
	linked := map[string]bool{}
	for name, text := range files {
		if !strings.HasSuffix(name, ".md") {
			continue
		}
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if target == "" || strings.HasPrefix(target, "#") || strings.Contains(target, "://") {
				continue
			}
			if name != "SKILL.md" {
				t.Errorf("%s links %s: only SKILL.md links files", name, target)
				continue
			}
			p := path.Clean(target)
			if _, ok := files[p]; !ok || path.IsAbs(target) || strings.HasPrefix(p, "../") || p == ".." {
				t.Errorf("SKILL.md links %s, which is no file the skill writes beside it", target)
			}
			linked[p] = true
		}
	}
	refs := skillReferences()
	if len(refs) == 0 {
		t.Fatal("the skill has no reference files")
	}
	for _, r := range refs {
		if !linked[r.Path] {
			t.Errorf("SKILL.md does not link %s", r.Path)
		}
		if _, ok := files[r.Path]; !ok {
			t.Errorf("reference %s is not among the skill's files", r.Path)
		}
	}
	// The whole catalog is in the references: every global flag.
	d := describeCLI(app)
	for _, f := range d.Globals {
		if !strings.Contains(files["references/commands.md"], "`"+f.Spelling()+"`") {
			t.Errorf("references/commands.md lacks the global flag %s", f.Spelling())
		}
	}
}

// TestSkillFolderIsNamedAfterTheSkill: whatever --out names, the folder
// the skill is written to bears the name in SKILL.md's frontmatter, or the
// layout is refused: DIR/custody below a directory of skills, DIR itself
// when it is named custody (also with a trailing slash or a relative
// spelling once cleaned), and a refusal for a directory that is another
// skill's folder or is not a directory.
func TestSkillFolderIsNamedAfterTheSkill(t *testing.T) {
	t.Parallel()
	app, err := cliModel()
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`\A---\nname: ([^\n]*)\n`).FindStringSubmatch(skillFiles(describeCLI(app))["SKILL.md"])
	if m == nil {
		t.Fatal("SKILL.md has no name")
	}
	name := m[1]
	root := t.TempDir()
	for _, d := range []string{"skills", "custody", "other", "file"} {
		if d != "file" {
			if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(root, "other", "SKILL.md"), []byte("---\nname: other\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		out, want string // want "" is a refusal
	}{
		{"skills", "skills/custody"},
		{"new/skills", "new/skills/custody"},
		{"custody", "custody"},
		{"custody/", "custody"},
		{"skills/../custody/.", "custody"},
		{"skills/custody", "skills/custody"},
		{"other", ""},
		{"file", ""},
	} {
		got, err := skillFolder(filepath.Clean(filepath.Join(root, tt.out)))
		switch {
		case tt.want == "":
			if err == nil {
				t.Errorf("--out %s: folder %s, want a refusal", tt.out, got)
			}
		case err != nil:
			t.Errorf("--out %s: %v", tt.out, err)
		case got != filepath.Join(root, tt.want) || filepath.Base(got) != name:
			t.Errorf("--out %s: folder %s, want %s named %s", tt.out, got, filepath.Join(root, tt.want), name)
		}
	}
}
