package observe_test

import (
	"context"
	"errors"
	"testing"

	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/hostio"
)

// TestRunRefusedOnWindows: with no process groups to bound a command,
// nothing runs, and the error says so.
func TestRunRefusedOnWindows(t *testing.T) {
	_, err := (&hostio.Runner{}).Run(context.Background(), hostio.Cmd{Args: []string{"git", "--version"}})
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("Run = %v; want an error matching errors.ErrUnsupported", err)
	}
	if p := observe.ScanProcesses(); p.Err == "" {
		t.Fatal("ScanProcesses on windows: no Err")
	}
}
