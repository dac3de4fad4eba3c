package machine

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateDocs = flag.Bool("update", false, "rewrite the generated files in docs/")

// generatedDocs returns every file docs/ derives from this package.
func generatedDocs() map[string]string {
	var b strings.Builder
	b.WriteString("# Refusal codes\n\nGenerated from machine/refusals.go by `go generate ./...`; do not edit.\n\n")
	b.WriteString("| code | meaning |\n|---|---|\n")
	codes := Codes()
	for _, c := range SortedCodes() {
		fmt.Fprintf(&b, "| `%s` | %s |\n", c, codes[c])
	}
	return map[string]string{
		"worktree-machine.dot": WorktreeGraph(),
		"resource-machine.dot": ResourceGraph(),
		"archive-machine.dot":  ArchiveGraph(),
		"refusals.md":          b.String(),
	}
}

// TestDocsFresh fails when a generated file in docs/ no longer matches the
// code it is drawn from.
func TestDocsFresh(t *testing.T) {
	for name, want := range generatedDocs() {
		path := filepath.Join("..", "docs", name)
		if *updateDocs {
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != want {
			t.Errorf("docs/%s is stale. To update, run 'go generate ./...'.", name)
		}
	}
}
