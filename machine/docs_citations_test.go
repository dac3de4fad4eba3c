package machine_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// goneOnPurpose are citations a document makes of names that no longer
// exist because it says what became of them; any other citation must name
// something the module holds.
var goneOnPurpose = map[string]map[string]string{
	"docs/decisions/0170-portability-and-in-use-on-darwin.md": {
		"_unix.go": "a file-name suffix", "_linux.go": "a file-name suffix", "_darwin.go": "a file-name suffix",
		"_windows.go": "a file-name suffix", "_other.go": "a file-name suffix",
	},
	"docs/decisions/0221-a-restore-writes-only-beneath-its-target.md": {
		"observe.ExtractImage": "the record says it is gone",
	},
	"docs/decisions/0232-binary-driving-tests-split-by-feature.md": {
		"TestApplyRedTeam*":     "the record names the tests' old names",
		"TestKnownCleanRedTeam": "the record names the tests' old names",
		"e2e_test.go":           "the record names the file's old name",
	},
}

// moduleNames is what the module declares: the top-level names and
// methods of each package name (packages of one name pooled) and every
// test, benchmark and fuzz function.
type moduleNames struct {
	exported map[string]map[string]bool
	tests    map[string]bool
	// base holds every file name of the module.
	base map[string]bool
}

// hasTest reports whether the module declares the test name, or with
// prefix one whose name starts with it.
func (m moduleNames) hasTest(name string, prefix bool) bool {
	if !prefix {
		return m.tests[name]
	}
	for n := range m.tests {
		if strings.HasPrefix(n, name) {
			return true
		}
	}
	return false
}

// readModuleNames parses every Go file under root for its top-level
// declarations.
func readModuleNames(t *testing.T, root string) moduleNames {
	t.Helper()
	m := moduleNames{exported: map[string]map[string]bool{}, tests: map[string]bool{}, base: map[string]bool{}}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		m.base[d.Name()] = true
		if !strings.HasSuffix(p, ".go") || strings.Contains(filepath.ToSlash(p), "/testdata/") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		pkg := strings.TrimSuffix(f.Name.Name, "_test")
		if m.exported[pkg] == nil {
			m.exported[pkg] = map[string]bool{}
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				// A method counts as a name of its package: the docs
				// write store.Check for the Store's Check.
				m.exported[pkg][d.Name.Name] = true
				if d.Recv == nil && strings.HasSuffix(p, "_test.go") {
					m.tests[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						m.exported[pkg][s.Name.Name] = true
					case *ast.ValueSpec:
						for _, n := range s.Names {
							m.exported[pkg][n.Name] = true
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var (
	// repoPath is a path from the module's root: a top-level folder, then
	// more of it.
	repoPath = regexp.MustCompile(`(?:^|[^\w./-])((?:machine|observe|steps|store|cmd|fixtures|docs)/[\w./-]*\w)`)
	// goFile is a Go file or a script named by itself.
	goFile = regexp.MustCompile(`(?:^|[^\w./-])([\w.-]+\.(?:go|txtar))\b`)
	// testName is a test, benchmark or fuzz function, or with a * every
	// one whose name starts so.
	testName = regexp.MustCompile(`\b((?:Test|Benchmark|Fuzz)[A-Z]\w*)(\*?)`)
	// qualified is pkg.Name, an exported name of a package.
	qualified = regexp.MustCompile(`(?:^|[^\w./-])([a-z]\w*)\.([A-Z]\w*)`)
	// recordNumber is a decision record named by its number alone.
	recordNumber = regexp.MustCompile(`^docs/decisions/(\d{4})$`)
)

// TestDocsCiteWhatExists: every path from the module's root, Go file,
// test and exported name of one of the module's packages that the docs
// (README.md and docs/, decision records included) cite exists in the
// module, so a file moved or a test renamed cannot leave a citation
// behind. A citation of something a document says is gone is listed in
// goneOnPurpose.
func TestDocsCiteWhatExists(t *testing.T) {
	t.Parallel()
	root := ".."
	m := readModuleNames(t, root)
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	records, err := filepath.Glob(filepath.Join(root, "docs", "decisions", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs = append(append(docs, records...), filepath.Join(root, "README.md"))
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		rel := filepath.ToSlash(strings.TrimPrefix(doc, root+string(filepath.Separator)))
		gone := goneOnPurpose[rel]
		for i, line := range strings.Split(string(b), "\n") {
			bad := func(what, cited string) {
				if gone[cited] == "" {
					t.Errorf("%s:%d cites %s %s, which the module does not hold", rel, i+1, what, cited)
				}
			}
			for _, c := range repoPath.FindAllStringSubmatch(line, -1) {
				if !pathExists(root, c[1]) {
					bad("the path", c[1])
				}
			}
			for _, c := range goFile.FindAllStringSubmatch(line, -1) {
				if !m.base[c[1]] {
					bad("the file", c[1])
				}
			}
			for _, c := range testName.FindAllStringSubmatch(line, -1) {
				if !m.hasTest(c[1], c[2] == "*") {
					bad("the test", c[1]+c[2])
				}
			}
			for _, c := range qualified.FindAllStringSubmatch(line, -1) {
				if names, ok := m.exported[c[1]]; ok && !names[c[2]] {
					bad("the name", c[1]+"."+c[2])
				}
			}
		}
	}
}

// pathExists reports whether the module holds p (relative to root): a
// file or folder, a folder followed by one of its package's names
// (fixtures/unprivileged.Run), or a decision record by its number.
func pathExists(root, p string) bool {
	if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(p))); err == nil {
		return true
	}
	if n := recordNumber.FindStringSubmatch(p); n != nil {
		ms, _ := filepath.Glob(filepath.Join(root, "docs", "decisions", n[1]+"-*.md"))
		return len(ms) == 1
	}
	if ext := path.Ext(p); len(ext) > 1 && ext[1] >= 'A' && ext[1] <= 'Z' {
		fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(strings.TrimSuffix(p, ext))))
		return err == nil && fi.IsDir()
	}
	return false
}

// TestDecisionIndexListsEveryRecord: docs/decisions/README.md links every
// decision record once, with a status, and links only records that exist.
func TestDecisionIndexListsEveryRecord(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "docs", "decisions")
	index, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^\| (\d{4}) \| \[[^\]]+\]\(([^)]+)\) \| .+ \| (current|(?:amended|superseded) by [\d, ]+) \|$`)
	listed := map[string]bool{}
	for _, r := range row.FindAllStringSubmatch(string(index), -1) {
		if !strings.HasPrefix(r[2], r[1]+"-") {
			t.Errorf("README.md: record %s links %s", r[1], r[2])
		}
		if _, err := os.Stat(filepath.Join(dir, r[2])); err != nil {
			t.Errorf("README.md links %s, which does not exist", r[2])
		}
		if listed[r[2]] {
			t.Errorf("README.md lists %s more than once", r[2])
		}
		listed[r[2]] = true
	}
	for _, line := range strings.Split(string(index), "\n") {
		if strings.HasPrefix(line, "| 0") && !row.MatchString(line) || strings.Count(line, "](0") > 1 && strings.HasPrefix(line, "| 0") {
			t.Errorf("README.md: a row that is not one record's (number, linked title, what it decides, status): %.120s", line)
		}
	}
	records, err := filepath.Glob(filepath.Join(dir, "[0-9][0-9][0-9][0-9]-*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(records) == 0 {
		t.Fatal("no decision records found")
	}
	for _, r := range records {
		if !listed[filepath.Base(r)] {
			t.Errorf("README.md does not list %s (a row: number, linked title, what it decides, status)", filepath.Base(r))
		}
	}
}
