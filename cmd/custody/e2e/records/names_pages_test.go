package records

// Names are bytes on the pages custody writes for people (decision 0229):
// the journal report (HTML and markdown) and the markdown export show a
// repository path, an adopted tree's path and id, a branch and an export's
// file name holding markup, table metacharacters, a newline and bytes that
// are not UTF-8 exactly once each, escaped, as valid UTF-8, and none of
// them breaks the page's structure.

import (
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
)

// hostileName is a directory name made of what breaks a page: markup, a
// script, table and code-span metacharacters, emphasis, a link, an entity,
// math, a heading mark, a backslash, a byte that is not UTF-8 and a
// newline.
const hostileName = "r<script>alert(1)</script>|`x` **b** _i_ [l](y) &amp; $m$ #h\\q\x80\nz"

func TestNamesOnPages(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{Name: hostileName})
	var human []string // what custody printed for a person
	human = append(human, clitest.MustCustody(t, r, 0, "init").Stdout)

	pushedID, pushed := clitest.NewTree(t, r, "pushed")
	r.Commit(pushed, "f.txt", "published\n")
	r.Push(pushed, "pushed")

	branch := "b|<i>`\x82&amp;_u_!"
	adopted := filepath.Join(r.Root, "w|<i>`\x81\n# *[x]")
	r.Git("worktree", "add", "-q", "-b", branch, adopted)
	r.Commit(adopted, "adopted.txt", "adopted\n")
	r.GitIn(adopted, "push", "-q", "origin", "HEAD:refs/heads/adopted")
	human = append(human, clitest.MustCustody(t, r, 0, "adopt", adopted).Stdout)
	adoptedID := ""
	for _, rec := range clitest.ListRecords(t, r, false) {
		if rec.Path == adopted {
			adoptedID = rec.ID
		}
	}
	if adoptedID == "" || machine.MarkdownText(adoptedID) == adoptedID {
		t.Fatalf("the adopted tree's id %q holds nothing a page must escape: the test would test nothing", adoptedID)
	}
	clitest.MustCustody(t, r, 0, "finish", pushedID, adoptedID)
	planFile := filepath.Join(r.Root, "plan.json")
	clitest.MustCustody(t, r, 0, "plan", "-o", planFile)
	human = append(human, clitest.MustCustody(t, r, 0, "apply", "--allow-external-retirement", planFile).Stdout)
	for _, out := range human {
		if !utf8.ValidString(out) {
			t.Errorf("custody printed bytes that are not UTF-8:\n%s", out)
		}
		for _, n := range []string{r.Dir, adopted, branch} {
			if strings.Contains(out, n) {
				t.Errorf("custody printed %q raw, its newline or stray byte unescaped:\n%s", n, out)
			}
		}
	}

	export := filepath.Join(r.Root, "j<b>|`\x83\n.jsonl")
	clitest.MustCustody(t, r, 0, "journal", "export", "-o", export)

	names := map[string]string{"repository path": pushed, "adopted path": adopted, "adopted id": adoptedID, "branch": branch}
	page := func(args ...string) string {
		t.Helper()
		out := filepath.Join(r.Root, "page")
		clitest.MustCustody(t, r, 0, append(args, "-o", out)...)
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if !utf8.Valid(b) {
			t.Fatalf("custody %s wrote a page that is not UTF-8:\n%s", strings.Join(args, " "), b)
		}
		return string(b)
	}

	t.Run("html", func(t *testing.T) {
		for _, p := range []struct {
			page  string
			names map[string]string
		}{
			{page("journal", "report"), names},
			{page("journal", "report", export), withName(names, "export file", "the export "+export)},
		} {
			checkHTMLPage(t, p.page)
			for what, n := range p.names {
				if want := html.EscapeString(machine.ShowName(n)); !strings.Contains(p.page, want) {
					t.Errorf("the HTML report does not show the %s %q as %q:\n%s", what, n, want, p.page)
				}
			}
		}
	})
	t.Run("md", func(t *testing.T) {
		for _, p := range []struct {
			page  string
			names map[string]string
		}{
			{page("journal", "report", "--format", "md"), names},
			{page("journal", "report", "--format", "md", export), withName(names, "export file", "the export "+export)},
			{page("journal", "export", "--format", "md"), map[string]string{"adopted id": adoptedID}},
		} {
			checkMarkdownPage(t, p.page)
			for what, n := range p.names {
				if want := machine.MarkdownText(n); !strings.Contains(p.page, want) {
					t.Errorf("the markdown page does not show the %s %q as %q:\n%s", what, n, want, p.page)
				}
			}
		}
	})
}

func withName(m map[string]string, what, name string) map[string]string {
	out := map[string]string{what: name}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// reportTags is the set of tags the report's HTML writer holds in its
// source: a tag on a page outside it came from a value, not the writer.
func reportTags(t *testing.T) map[string]bool {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "steps", "report", "report_html.go"))
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, m := range regexp.MustCompile(`<(/?)([A-Za-z!][A-Za-z0-9]*)[ >]`).FindAllStringSubmatch(string(src), -1) {
		known[m[2]] = true
	}
	if !known["html"] || !known["table"] || known["script"] {
		t.Fatalf("the tags read from the report's writer look wrong: %v", known)
	}
	return known
}

// checkHTMLPage fails unless every tag on the page is one the report
// writes, every id is one word of safe characters, and every line is
// markup or the style sheet (a name's newline did not make a line).
func checkHTMLPage(t *testing.T, page string) {
	t.Helper()
	tag := regexp.MustCompile(`<(/?)([A-Za-z!][A-Za-z0-9]*)`)
	known := reportTags(t)
	for _, m := range tag.FindAllStringSubmatch(page, -1) {
		if !known[m[2]] {
			t.Errorf("the HTML report holds a tag it does not write: %q", m[0])
		}
	}
	for _, m := range regexp.MustCompile(`\sid="([^"]*)"`).FindAllStringSubmatch(page, -1) {
		if !regexp.MustCompile(`^[A-Za-z0-9._%-]+$`).MatchString(m[1]) {
			t.Errorf("the HTML report has the id %q: not one word of letters, digits and ._%%-", m[1])
		}
	}
	_, body, _ := strings.Cut(page, "</style>")
	for _, l := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
		if !strings.HasPrefix(l, "<") {
			t.Errorf("a line of the HTML report is not markup (a name's newline split it): %q", l)
		}
	}
}

// checkMarkdownPage fails unless every line of the page is one of the
// shapes the report writes, every table row has its table's number of
// cells, and no text holds markdown syntax that is not escaped.
func checkMarkdownPage(t *testing.T, page string) {
	t.Helper()
	cells := -1
	for _, l := range strings.Split(page, "\n") {
		if !strings.HasPrefix(l, "|") {
			cells = -1
			if err := plainMarkdown(strings.TrimPrefix(strings.TrimPrefix(strings.TrimLeft(l, "#"), "- "), "> ")); err != "" {
				t.Errorf("markdown line %q: %s", l, err)
			}
			continue
		}
		row := splitRow(l)
		if cells == -1 {
			cells = len(row)
		} else if len(row) != cells {
			t.Errorf("markdown row %q has %d cells, its table %d", l, len(row), cells)
		}
		for _, c := range row {
			if err := plainMarkdown(c); err != "" {
				t.Errorf("markdown cell %q of row %q: %s", c, l, err)
			}
		}
	}
}

// splitRow splits a GFM table row on its pipes that no backslash escapes.
func splitRow(l string) []string {
	var out []string
	cur := strings.Builder{}
	for i := 1; i < len(l); i++ {
		switch {
		case l[i] == '\\' && i+1 < len(l):
			cur.WriteByte(l[i])
			cur.WriteByte(l[i+1])
			i++
		case l[i] == '|':
			out = append(out, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(l[i])
		}
	}
	return out
}

// plainMarkdown says what in s is markdown syntax ("" when nothing is):
// an unescaped character that starts or ends inline markup, outside the
// report's own bold markers.
func plainMarkdown(s string) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, `\\`, ""), "**", "")
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		if strings.IndexByte("`*_[]<>&|~$#!", s[i]) >= 0 {
			return "unescaped " + string(s[i])
		}
	}
	return ""
}
