package machine

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryCodeIsTested fails when a refusal code appears in no test of the
// module: every code must be produced and asserted somewhere, by its string
// or by its constant, in a Go test or in a CLI script
// (cmd/custody/e2e/scripts/*/testdata/script/*.txtar, where "code":"…"
// asserts it).
func TestEveryCodeIsTested(t *testing.T) {
	t.Parallel()
	var corpus strings.Builder
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != ".." {
			return fs.SkipDir
		}
		if strings.HasSuffix(p, "_test.go") && !strings.HasSuffix(p, filepath.Join("machine", "coverage_test.go")) && !strings.HasSuffix(p, filepath.Join("machine", "codes_test.go")) {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			corpus.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	scripts, err := filepath.Glob(filepath.Join("..", "cmd", "custody", "e2e", "scripts", "*", "testdata", "script", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(scripts) == 0 {
		t.Fatal("no CLI scripts in ../cmd/custody/e2e/scripts/*/testdata/script")
	}
	for _, p := range scripts {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		corpus.Write(b)
	}
	text := corpus.String()
	names := codeConstNames(t)
	for _, c := range SortedCodes() {
		if strings.Contains(text, `"`+string(c)+`"`) || strings.Contains(text, names[c]+")") ||
			strings.Contains(text, names[c]+",") || strings.Contains(text, names[c]+"}") || strings.Contains(text, names[c]+" ") {
			continue
		}
		t.Errorf("refusal code %q (%s) is asserted by no test", c, names[c])
	}
}

// codeConstNames maps each code to its constant's name, read from
// refusals.go.
func codeConstNames(t *testing.T) map[Code]string {
	b, err := os.ReadFile("refusals.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[Code]string{}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 4 && f[1] == "Code" && f[2] == "=" && strings.HasPrefix(f[0], "Code") {
			out[Code(strings.Trim(f[3], `"`))] = f[0]
		}
	}
	return out
}
