package main

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// TestManPageFormats: groff reads docs/custody.1 with every warning on
// and reports none.
func TestManPageFormats(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("groff"); err != nil {
		t.Skip("groff is not installed: the man page is not formatted")
	}
	out, err := exec.Command("groff", "-man", "-Tutf8", "-ww", "-z", filepath.Join("..", "..", "docs", "custody.1")).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("groff -man -ww docs/custody.1: %v\n%s", err, out)
	}
}
