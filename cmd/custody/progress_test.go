package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestProgressNeverOffATerminal: progress is printed only on a terminal's
// stderr, so what scripts and logs capture never holds it: not on a regular
// file, a pipe or /dev/null (a character device, but no terminal), and
// never with --json. (progress_linux_test.go shows it on a terminal.)
func TestProgressNeverOffATerminal(t *testing.T) {
	t.Parallel()
	file, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	for name, f := range map[string]*os.File{"regular file": file, "pipe": pw, "/dev/null": null} {
		for _, jsonOut := range []bool{false, true} {
			a := &App{Globals: &Globals{JSON: jsonOut}, Stderr: f}
			if p := a.progress(); p != nil {
				t.Errorf("stderr a %s (--json %v): progress %T, want none", name, jsonOut, p)
			}
		}
	}
}
