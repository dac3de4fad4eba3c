package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTablesGoThroughTable: every aligned listing custody prints is
// written by table, which escapes each cell; a tabwriter would print a
// name's newline and stray bytes raw (migrate's listings did).
func TestTablesGoThroughTable(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), `"text/tabwriter"`) {
			t.Errorf("%s imports text/tabwriter: print aligned rows with table, which escapes names", f)
		}
	}
}
