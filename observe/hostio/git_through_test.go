package hostio

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestGitThrough: a Git with Through hands it every command with the run
// that runs it on the Runner under git's environment, and returns what
// Through returned.
func TestGitThrough(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found: Through is checked where git runs")
	}
	ctx := context.Background()
	g := NewGit(&Runner{})
	var seen [][]string
	g.Through = func(ctx context.Context, c Cmd, run func(context.Context, Cmd) (Result, error)) (Result, error) {
		seen = append(seen, c.Args)
		return run(ctx, c)
	}
	// protocol.ext.allow is "never" only under custody's git environment
	// (gitEnv), which run applies.
	out, err := g.Observe(ctx, t.TempDir(), "config", "--get", "protocol.ext.allow")
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]string{{"git", "config", "--get", "protocol.ext.allow"}}; !slices.EqualFunc(seen, want, slices.Equal[[]string]) {
		t.Errorf("Through saw %q, want %q", seen, want)
	}
	if got := strings.TrimSpace(string(out)); got != "never" {
		t.Errorf("git config --get protocol.ext.allow through run = %q, want never (custody's environment)", got)
	}

	// A Through that answers without running: its answer is the command's.
	g.Through = func(context.Context, Cmd, func(context.Context, Cmd) (Result, error)) (Result, error) {
		return Result{Stdout: []byte("answered\n")}, nil
	}
	out, err = g.Mutate(ctx, t.TempDir(), "this-is-not-a-git-command")
	if err != nil || string(out) != "answered\n" {
		t.Errorf("Mutate through an answering Through = %q, %v; want its answer", out, err)
	}

	// Without Through, the command runs on the Runner.
	g.Through = nil
	if _, err := g.Mutate(ctx, t.TempDir(), "this-is-not-a-git-command"); err == nil {
		t.Errorf("Mutate of an unknown git command without Through: no error")
	}
}
