package machine_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// custodyWords are the words that make "custody WORD" a command line
// rather than prose about custody.
var custodyWords = words(`init new list show finish remove reopen plan apply resume journal doctor resource
	archive migrate hook adopt teardown trust integrate skill relocate recovered completion man
	version gc -C --json --lock-timeout --remote-timeout`)

// gitWords are the words that make "git WORD" a command line.
var gitWords = words(`-C --git-dir worktree stash push branch switch update-index ls-remote
	update-ref checkout-index ls-files remote submodule fetch config checkout rev-parse status log
	show commit add restore reset merge rebase cherry-pick bisect tag clean cat-file for-each-ref
	rev-list merge-base diff gc prune`)

func words(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// commandStart finds "custody WORD" or "git WORD" standing as a word.
var commandStart = regexp.MustCompile("(?:^|[\\s(`:'\"])(custody|git) +(--?[A-Za-z-]+|[a-z][a-z-]*)")

// placeholder stands, in the text a format or a concatenation makes, for
// a value spliced in; the byte after it is the value's index.
const placeholder = '\x00'

// segmentEnd ends the command a segment of text holds: what follows is
// prose (or a further command, found by its own start).
var segmentEnd = regexp.MustCompile("\n|\t|; |;$| \\(|\\)|`|: |, |\\. |\\.$")

// quoters are the functions whose result is quoted for pasting: Command
// and CommandAgain build whole lines, QuoteArg and QuotePath one word, and
// every one of them quotes through ShellWord.
var quoters = map[string]bool{"Command": true, "CommandAgain": true, "QuoteArg": true, "ShellWord": true, "QuotePath": true}

// allowedProse are texts the scan takes for commands that are prose about
// a command custody ran; each says why no person is asked to paste it.
var allowedProse = map[string]string{
	"git status failed in \x00\x00: \x00\x01": "reports the command that failed; the retry line is apart",
	"git worktree move did not move \x00\x00 to \x00\x01 (\x00\x02); the tree stays where it was and \x00\x03 is active there":                               "reports what git did",
	"interrupted while git worktree move was moving \x00\x00 to \x00\x01 (\x00\x02); its relocation intent stays, and custody resume finishes or steps back": "reports what git did",
	"git worktree remove refused \x00\x00 and removed nothing: \x00\x01":                                                                                     "reports what git did",
	"interrupted while git worktree add was making \x00\x00; its create intent stays, and custody resume finishes or undoes it":                              "reports what git did",
	"git worktree add \x00\x00 failed; nothing was kept: \x00\x01":                                                                                           "reports what git did",
	"git worktree add \x00\x00 failed and left something behind; run `custody resume` to settle it: \x00\x01":                                                "reports what git did",
}

// TestPrintedCommandsQuoteEveryValue scans every source file for a command
// line built by splicing a value into text ("custody show " + id,
// fmt.Sprintf("custody finish %s", id)): every value spliced into a
// printed command must come from machine.Command or machine.QuoteArg, so
// no tree name, path or ref, pasted, runs as code.
func TestPrintedCommandsQuoteEveryValue(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	root := ".."
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			// The test helpers (fixtures, cmd/custody/internal/clitest)
			// print no command for a person to paste.
			switch d.Name() {
			case "testdata", "fixtures", "clitest", ".git":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		found = append(found, scanSplices(fset, f)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Error(f)
	}
}

// TestScanSplicesFindsMembers: the scan finds the shapes it is for, and
// passes quoted ones, so TestPrintedCommandsQuoteEveryValue can fail.
func TestScanSplicesFindsMembers(t *testing.T) {
	t.Parallel()
	src := `package p
func f() {
	_ = "custody show " + id                                  // bad
	_ = "custody show " + QuoteArg(id)                        // good
	_ = fmt.Sprintf("next: custody finish %s when done", id)  // bad
	_ = fmt.Sprintf("next: custody finish %s when done", machine.QuoteArg(id)) // good
	_ = refuse(c, p, "custody plan", "%s is %s (custody reopen %s makes it active)", a, b, id) // bad
	_ = fmt.Sprintf("custody keeps no record of %s", p)     // prose: good
	_ = "git -C " + q + " stash push"                         // bad
	_ = fmt.Sprintf("git push %q %s", remote, machine.QuoteArg(ref)) // bad
	_ = fmt.Sprintf("custody migrate discover --scan-limit %d", n) // good
	_ = machine.Command("custody", "show", id)                // good
}`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := scanSplices(fset, f)
	var lines []int
	for _, g := range got {
		var n int
		if i := strings.Index(g, "p.go:"); i >= 0 {
			n, _ = strconv.Atoi(strings.SplitN(g[i+5:], ":", 2)[0])
		}
		lines = append(lines, n)
	}
	want := []int{3, 5, 7, 9, 10}
	if len(lines) != len(want) {
		t.Fatalf("found %v, want lines %v", got, want)
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("found %v, want lines %v", got, want)
		}
	}
}

// scanSplices returns one line per value spliced unquoted into a command.
func scanSplices(fset *token.FileSet, f *ast.File) []string {
	var out []string
	seen := map[ast.Node]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BinaryExpr:
			if n.Op != token.ADD || seen[n] {
				return true
			}
			var parts []ast.Expr
			flatten(n, &parts, seen)
			text, vals, ok := virtualText(parts)
			if ok {
				out = append(out, check(fset, n.Pos(), text, vals)...)
			}
		case *ast.CallExpr:
			for i, a := range n.Args {
				s, ok := literal(a)
				if !ok || !strings.Contains(s, "%") {
					continue
				}
				text, vals := formatText(s, n.Args[i+1:])
				out = append(out, check(fset, a.Pos(), text, vals)...)
				break
			}
		}
		return true
	})
	return out
}

func flatten(e ast.Expr, parts *[]ast.Expr, seen map[ast.Node]bool) {
	if b, ok := e.(*ast.BinaryExpr); ok && b.Op == token.ADD {
		seen[b] = true
		flatten(b.X, parts, seen)
		flatten(b.Y, parts, seen)
		return
	}
	if p, ok := e.(*ast.ParenExpr); ok {
		flatten(p.X, parts, seen)
		return
	}
	*parts = append(*parts, e)
}

// literal returns the value of a string literal.
func literal(e ast.Expr) (string, bool) {
	l, ok := e.(*ast.BasicLit)
	if !ok || l.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(l.Value)
	return s, err == nil
}

// virtualText joins a concatenation's parts, each value as a placeholder;
// ok is false when no part is a string literal (not text being built).
func virtualText(parts []ast.Expr) (string, []ast.Expr, bool) {
	var b strings.Builder
	var vals []ast.Expr
	ok := false
	for _, p := range parts {
		if s, isLit := literal(p); isLit {
			b.WriteString(s)
			ok = true
			continue
		}
		b.WriteByte(placeholder)
		b.WriteByte(byte(len(vals)))
		vals = append(vals, p)
	}
	return b.String(), vals, ok
}

// formatText is the format s with each verb as a placeholder for its
// argument; %d and %c stand for nothing a shell reads.
func formatText(s string, args []ast.Expr) (string, []ast.Expr) {
	var b strings.Builder
	var vals []ast.Expr
	arg := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		j := i + 1
		for j < len(s) && strings.IndexByte("+-# 0123456789.*[]", s[j]) >= 0 {
			j++
		}
		if j >= len(s) {
			break
		}
		verb := s[j]
		i = j
		if verb == '%' {
			b.WriteByte('%')
			continue
		}
		var v ast.Expr
		if arg < len(args) {
			v = args[arg]
		}
		arg++
		if verb == 'd' {
			b.WriteString("0")
			continue
		}
		b.WriteByte(placeholder)
		b.WriteByte(byte(len(vals)))
		if verb == 'q' {
			v = nil // Go quoting is not shell quoting
		}
		vals = append(vals, v)
	}
	return b.String(), vals
}

// check reports each value spliced unquoted into a command of text.
func check(fset *token.FileSet, pos token.Pos, text string, vals []ast.Expr) []string {
	if _, ok := allowedProse[text]; ok {
		return nil
	}
	var out []string
	for _, m := range commandStart.FindAllStringSubmatchIndex(text, -1) {
		prog, word := text[m[2]:m[3]], text[m[4]:m[5]]
		if prog == "custody" && !custodyWords[word] || prog == "git" && !gitWords[strings.TrimSuffix(word, "=")] {
			continue
		}
		seg := text[m[2]:]
		if e := segmentEnd.FindStringIndex(seg); e != nil {
			seg = seg[:e[0]]
		}
		for i := 0; i+1 < len(seg); i++ {
			if seg[i] != placeholder {
				continue
			}
			v := vals[seg[i+1]]
			if !quoted(v) {
				out = append(out, fmt.Sprintf("%s: a value is spliced unquoted into the printed command %q: build it with machine.Command",
					fset.Position(pos), shown(seg)))
				break
			}
			i++
		}
	}
	return out
}

// quoted reports whether e is a call of a quoting function.
func quoted(e ast.Expr) bool {
	c, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	switch f := c.Fun.(type) {
	case *ast.Ident:
		return quoters[f.Name]
	case *ast.SelectorExpr:
		return quoters[f.Sel.Name]
	}
	return false
}

// shown is text with each placeholder written VALUE.
func shown(text string) string {
	var b strings.Builder
	for i := 0; i < len(text); i++ {
		if text[i] == placeholder && i+1 < len(text) {
			b.WriteString("VALUE")
			i++
			continue
		}
		b.WriteByte(text[i])
	}
	return b.String()
}
