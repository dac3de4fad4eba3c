package machine_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const modulePath = "github.com/custody-sh/custody"

// badImports are packages machine/ must not import directly: it decides
// and does no I/O (DESIGN §1.2).
var badImports = map[string]string{
	"os":            "no filesystem or process access: observe/ reads, steps/ acts",
	"os/exec":       "no exec: commands run in steps/ through the one runner",
	"io/fs":         "no filesystem: observe/ turns lstat into values",
	"io/ioutil":     "no filesystem",
	"net":           "no network: remotes are asked by observe/",
	"net/http":      "no network",
	"syscall":       "no system calls: identity comes in as an observation",
	"os/signal":     "no process control",
	"path/filepath": "no host paths: paths are values compared exactly",
}

// badDeps are packages machine/ must not depend on even indirectly.
var badDeps = map[string]string{
	"go.etcd.io/bbolt":                           "persistence belongs to store/; Commit is the seam",
	"github.com/alecthomas/kong":                 "the CLI belongs to cmd/custody",
	"golang.org/x/sys/unix":                      "system calls belong to observe/",
	"github.com/rogpeppe/go-internal/testscript": "test tooling",
}

// ownLeaves are the packages of ours machine/ may import: pure leaves that
// do no I/O and import nothing else of ours.
var ownLeaves = map[string]string{
	modulePath + "/machine/bytejson": "the byte-exact JSON codec every file custody writes goes through (decision 0220)",
}

// badClock are calls that read the clock: time is injected.
var badClock = map[string]string{
	"Now":   "no clock: time is a parameter (Firing.Now, Assess now)",
	"Since": "reads the clock",
	"Until": "reads the clock",
	"Tick":  "reads the clock",
	"After": "reads the clock",
	"Sleep": "machine never waits",
}

// sourceFiles parses the package's non-test files.
func sourceFiles(t *testing.T) map[string]*ast.File {
	t.Helper()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*ast.File{}
	fset := token.NewFileSet()
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		out[n] = f
	}
	if len(out) == 0 {
		t.Fatal("no source files found")
	}
	return out
}

func TestDeps(t *testing.T) {
	t.Parallel()
	for name, f := range sourceFiles(t) {
		timeName := ""
		for _, imp := range f.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			if why, bad := badImports[path]; bad {
				t.Errorf("%s imports %s: %s", name, path, why)
			}
			if why, bad := badDeps[path]; bad {
				t.Errorf("%s imports %s: %s", name, path, why)
			}
			if _, leaf := ownLeaves[path]; !leaf && (path == modulePath || strings.HasPrefix(path, modulePath+"/")) {
				t.Errorf("%s imports %s: machine/ imports nothing of ours", name, path)
			}
			if path == "time" {
				timeName = "time"
				if imp.Name != nil {
					timeName = imp.Name.Name
				}
			}
		}
		if timeName == "" {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == timeName {
				if why, bad := badClock[sel.Sel.Name]; bad {
					t.Errorf("%s uses time.%s: %s", name, sel.Sel.Name, why)
				}
			}
			return true
		})
	}
}

// TestDepsTransitive asks the go command for the package's whole import
// graph: nothing of this module, and none of badDeps, may be reached.
func TestDepsTransitive(t *testing.T) {
	t.Parallel()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found")
	}
	cmd := exec.Command(gobin, "list", "-deps", "-json=ImportPath,Standard", ".")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	seen := 0
	for {
		var p struct {
			ImportPath string
			Standard   bool
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		seen++
		if why, bad := badDeps[p.ImportPath]; bad {
			t.Errorf("machine depends on %s: %s", p.ImportPath, why)
		}
		if _, leaf := ownLeaves[p.ImportPath]; !leaf && p.ImportPath != modulePath+"/machine" && strings.HasPrefix(p.ImportPath, modulePath+"/") {
			t.Errorf("machine depends on %s: machine/ imports nothing of ours", p.ImportPath)
		}
	}
	if seen < 2 {
		t.Fatalf("go list listed %d packages; the check saw nothing", seen)
	}
}
