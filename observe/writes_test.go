package observe_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// observeWriters are the only functions of package observe (and of its
// subpackages hostio, gitfiles and proof) that write,
// each one of the bounded exceptions the package documentation lists
// (doc.go), with the class it falls in. A function that starts to write
// fails TestObserveWritesOnlyWhereDocumented until it is listed here and
// in doc.go, or its write moves to steps; one that stops writing fails it
// too, so the list stays exact.
var observeWriters = map[string]string{
	// The runner's entry points for git commands that write, which steps
	// call to act (observe itself calls them only as listed below).
	"hostio/git.go:Mutate":        "runner",
	"hostio/git.go:MutateInput":   "runner",
	"hostio/git.go:MutateWithEnv": "runner",
	"hostio/git.go:RunWith":       "runner",
	// The registry lock, and the one command run under it that changes
	// git's worktree registry (only steps call it).
	"gitfiles/lock.go:lockRegistry":       "registry lock",
	"gitfiles/lock.go:noteRegistryHolder": "registry lock",
	"gitfiles/lock.go:ChangeRegistry":     "registry lock",
	// Missing objects of an advertised tip fetched for a proof: objects
	// only, no ref (DESIGN §5).
	"proof/remote.go:ensureObjects": "proof objects",
	// Scratch: custody's own throwaway repositories and files.
	"archive_git.go:InitScratch":                  "scratch",
	"archive_git.go:WriteScratchTree":             "scratch",
	"archive_git.go:WritePatch":                   "scratch",
	"archive_git.go:CreateBundle":                 "scratch",
	"archive_git.go:CheckPack":                    "scratch",
	"archive_tree.go:writeLoose":                  "scratch",
	"proof/identity_remote.go:ownObjectsComplete": "scratch",
	// Derived data: the content-hash cache.
	"hashcache.go:save":           "hash cache",
	"hashcache.go:PruneHashCache": "hash cache",
	"hashcache.go:moment":         "hash cache",
}

// osWrites are the os functions that change the filesystem.
var osWrites = []string{"Chmod", "Chown", "Chtimes", "Create", "CreateTemp", "Lchown", "Link", "Mkdir", "MkdirAll",
	"MkdirTemp", "Remove", "RemoveAll", "Rename", "Symlink", "Truncate", "WriteFile"}

// gitWrites are the git subcommands (and options) that write.
var gitWrites = []string{"init", "update-index", "write-tree", "bundle", "index-pack", "worktree", "update-ref", "fetch", "--output="}

// TestObserveWritesOnlyWhereDocumented: every function of package observe
// that writes (an os call that changes the filesystem, an OpenFile for
// writing, a git command that writes, or git's runner started directly
// with arguments it is given) is one observeWriters lists, and doc.go
// names each of them.
func TestObserveWritesOnlyWhereDocumented(t *testing.T) {
	t.Parallel()
	// The package and the subpackages it is made of (hostio, gitfiles,
	// proof): a write is listed by its file's path below observe/.
	var files []string
	for _, dir := range []string{".", "hostio", "gitfiles", "proof"} {
		fs, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, fs...)
	}
	found := map[string]bool{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if call, ok := n.(*ast.CallExpr); ok && writes(call) {
					found[name+":"+fn.Name.Name] = true
				}
				return true
			})
		}
	}
	for w := range found {
		if _, ok := observeWriters[w]; !ok {
			t.Errorf("%s writes, and it is not one of the exceptions doc.go lists: move the write to steps, or list it in observeWriters and doc.go", w)
		}
	}
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	for w := range observeWriters {
		if !found[w] {
			t.Errorf("%s is listed as a writer, but it writes nothing (any more): take it off observeWriters and doc.go", w)
		}
		if fn := w[strings.Index(w, ":")+1:]; !strings.Contains(string(doc), fn) {
			t.Errorf("doc.go does not name the writer %s", w)
		}
	}
}

// writes reports whether call changes something: an os write, an
// os.OpenFile or safefile.Open whose flags write, a safefile.Write, a write at an offset of an open file, a
// git command of gitWrites through scratchGit or RunWith, git run through
// Mutate, or git's environment made for a command that is no observation
// (gitEnv(false), g.run(ctx, false, …) or g.runCmd(ctx, false, …)).
func writes(call *ast.CallExpr) bool {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	var name string
	switch {
	case ok:
		name = sel.Sel.Name
		switch name {
		case "WriteAt", "Mutate", "MutateInput", "MutateWithEnv":
			return true
		case "run", "runCmd":
			return len(call.Args) > 1 && isFalse(call.Args[1])
		}
		if x, ok := sel.X.(*ast.Ident); ok && x.Name == "os" {
			if slices.Contains(osWrites, name) {
				return true
			}
			if name == "OpenFile" && len(call.Args) > 1 {
				return mentions(call.Args[1], "O_WRONLY", "O_RDWR", "O_CREATE", "O_APPEND", "O_TRUNC")
			}
			return false
		}
		if x, ok := sel.X.(*ast.Ident); ok && x.Name == "safefile" {
			switch {
			case name == "Write":
				return true
			case name == "Open" && len(call.Args) > 1:
				return mentions(call.Args[1], "O_WRONLY", "O_RDWR", "O_CREATE", "O_APPEND", "O_TRUNC")
			}
			return false
		}
	default:
		if id, ok := call.Fun.(*ast.Ident); ok {
			name = id.Name
		}
	}
	switch name {
	case "gitEnv":
		return len(call.Args) == 1 && isFalse(call.Args[0])
	case "scratchGit", "RunWith":
		for _, a := range call.Args {
			if gitWriteArg(a) {
				return true
			}
		}
	}
	return false
}

// gitWriteArg reports whether a is a string literal naming a git write, or
// a concatenation that begins with one ("--output="+file).
func gitWriteArg(a ast.Expr) bool {
	if b, ok := a.(*ast.BinaryExpr); ok {
		return gitWriteArg(b.X)
	}
	lit, ok := a.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return false
	}
	s, err := strconv.Unquote(lit.Value)
	if err != nil {
		return false
	}
	for _, w := range gitWrites {
		if s == w || strings.HasSuffix(w, "=") && strings.HasPrefix(s, w) {
			return true
		}
	}
	return false
}

// mentions reports whether the expression e uses any of the names.
func mentions(e ast.Expr, names ...string) bool {
	hit := false
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && slices.Contains(names, id.Name) {
			hit = true
		}
		return !hit
	})
	return hit
}

// isFalse reports whether e is the identifier false.
func isFalse(e ast.Expr) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == "false"
}
