package bytejson_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestOnlyCodec: no source file of custody but this package's imports
// encoding/json, so every file and envelope custody writes or reads keeps
// its bytes exact (a string through encoding/json loses every byte that is
// not UTF-8). Tests may use encoding/json to read what custody wrote as
// another program would; so may cmd/custody/e2e/journalcheck, the
// auditor's independent verifier, which must share no code with custody.
func TestOnlyCodec(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "testdata", ".git", "bytejson":
				return filepath.SkipDir
			}
			if filepath.ToSlash(path) == "../../cmd/custody/e2e/journalcheck" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if p == "encoding/json" || strings.HasPrefix(p, "github.com/go-json-experiment/") {
				t.Errorf("%s imports %s: custody reads and writes JSON through machine/bytejson only", path, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked %d source files; the walk did not reach the module", checked)
	}
}
