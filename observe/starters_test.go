package observe

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// processStarters are the functions (by import path) that start a process.
// Each one that custody calls must be reached only through Runner.Run,
// which always gives the process a deadline, its own process group and a
// bounded grace for what it leaves (DESIGN §8).
var processStarters = map[string]map[string]bool{
	"os/exec":                  {"Command": true, "CommandContext": true},
	"os":                       {"StartProcess": true},
	"syscall":                  {"ForkExec": true, "StartProcess": true, "Exec": true},
	"golang.org/x/sys/unix":    {"Exec": true},
	"golang.org/x/sys/windows": {"CreateProcess": true, "CreateProcessAsUser": true},
}

// starterHomes are the only non-test files that may start a process
// directly: the runner, and the files of test-only helper packages that
// start processes (imported by tests only): the fixtures' one starter,
// which gives every process a deadline; the one that re-runs a test as an
// unprivileged user; the end-to-end tests' runner of the custody binary;
// and observe's two test helpers under internal/ (they were _test.go files,
// which this test does not check, until observe was split, decision 0231).
var starterHomes = map[string]string{
	"observe/hostio/runner.go":               "the one runner of custody's commands",
	"fixtures/command.go":                    "the one starter of the test fixtures' processes, each with a deadline",
	"fixtures/unprivileged/run.go":           "re-runs a test binary as an unprivileged user (tests only)",
	"cmd/custody/internal/clitest/run.go":    "the one starter of the custody binary under test (tests only)",
	"observe/internal/gitsandbox/sandbox.go": "the git sandbox of observe's tests (tests only)",
	"observe/internal/realgit/realgit.go":    "the parser tests' git (tests only)",
}

// TestProcessesStartOnlyInTheRunner fails when a non-test Go file of the
// module other than starterHomes starts a process itself: calls or takes
// exec.Command, exec.CommandContext, os.StartProcess, syscall.ForkExec,
// syscall.Exec (…), or builds an exec.Cmd. Such a process would run with
// no deadline and could hold custody forever; route it through
// Runner.Run.
func TestProcessesStartOnlyInTheRunner(t *testing.T) {
	t.Parallel()
	root := ".."
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found above observe/: %v", err)
	}
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_")) {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		for _, bad := range processStartsIn(t, p) {
			if starterHomes[rel] != "" {
				seen[rel] = true
				continue
			}
			t.Errorf("%s: %s starts a process outside the runner; run it with observe.Runner.Run (it always has a deadline)", bad, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for home, why := range starterHomes {
		if !seen[home] {
			t.Errorf("%s (%s) starts no process any more: drop it from starterHomes, or this test checks nothing", home, why)
		}
	}
}

// processStartsIn lists, as line:column, each place the file at path
// names a process starter or builds an exec.Cmd.
func processStartsIn(t *testing.T, path string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{} // local name → import path
	var out []string
	for _, im := range f.Imports {
		ip, _ := strconv.Unquote(im.Path.Value)
		if processStarters[ip] == nil {
			continue
		}
		name := ip[strings.LastIndex(ip, "/")+1:]
		if im.Name != nil {
			name = im.Name.Name
		}
		if name == "." {
			out = append(out, fset.Position(im.Pos()).String()+" (dot import of "+ip+")")
			continue
		}
		names[name] = ip
	}
	isCmd := func(e ast.Expr) bool {
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		x, ok := sel.X.(*ast.Ident)
		return ok && names[x.Name] == "os/exec" && sel.Sel.Name == "Cmd"
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok && processStarters[names[x.Name]][n.Sel.Name] {
				out = append(out, fset.Position(n.Pos()).String())
			}
		case *ast.CompositeLit:
			if isCmd(n.Type) {
				out = append(out, fset.Position(n.Pos()).String()+" (exec.Cmd literal)")
			}
		case *ast.CallExpr:
			if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "new" && len(n.Args) == 1 && isCmd(n.Args[0]) {
				out = append(out, fset.Position(n.Pos()).String()+" (new exec.Cmd)")
			}
		}
		return true
	})
	return out
}

// TestProcessStartsFound: the scan finds each way of starting a process
// (so TestProcessesStartOnlyInTheRunner can fail), and not LookPath or a
// *exec.Cmd parameter.
func TestProcessStartsFound(t *testing.T) {
	t.Parallel()
	src := `package x

import (
	"os"
	ex "os/exec"
	"syscall"
)

func a(c *ex.Cmd) { _, _ = ex.LookPath("git") }
func b() { _ = ex.Command("git") }
func c() { f := ex.CommandContext; _ = f }
func d() { _, _ = os.StartProcess("git", nil, nil) }
func e() { _ = syscall.Exec("/bin/sh", nil, nil) }
func f() { _ = &ex.Cmd{Path: "git"} }
func g() { _ = new(ex.Cmd) }
`
	p := filepath.Join(t.TempDir(), "x.go")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, s := range processStartsIn(t, p) {
		parts := strings.Split(s, ":")
		lines = append(lines, parts[1])
	}
	if got, want := strings.Join(lines, ","), "10,11,12,13,14,15"; got != want {
		t.Errorf("process starts found on lines %s, want %s", got, want)
	}
}
