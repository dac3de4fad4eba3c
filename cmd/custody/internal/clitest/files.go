package clitest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// ReadFile returns the content of file p, failing the test when it cannot
// be read.
func ReadFile(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// ModuleFile is the path of rel (slash-separated, e.g. "docs/schemas")
// from the root of custody's module, found from the test's working
// directory up to the go.mod that declares the module.
func ModuleFile(t testing.TB, rel string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(b, []byte("module github.com/custody-sh/custody\n")) {
			return filepath.Join(dir, filepath.FromSlash(rel))
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod of module github.com/custody-sh/custody above the working directory")
		}
		dir = parent
	}
}
