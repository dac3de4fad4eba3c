// Package realgit runs the real git binary for the parser tests, isolated
// from the user's configuration and environment. It imports nothing of
// this module, so any package's internal tests may use it.
package realgit

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// parserGit runs the real git binary for the parser tests, isolated from the
// user's configuration and environment.
type parserGit struct {
	t    *testing.T
	home string
}

func NewParserGit(t *testing.T) *parserGit {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	return &parserGit{t: t, home: t.TempDir()}
}

func (g *parserGit) cmd(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GIT_") || strings.HasPrefix(kv, "HOME=") ||
			strings.HasPrefix(kv, "LC_") || strings.HasPrefix(kv, "LANG") {
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	cmd.Env = append(cmd.Env,
		"HOME="+g.home,
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_CONFIG_NOSYSTEM=1",
		"LC_ALL=C",
		"GIT_AUTHOR_NAME=Parser Test",
		"GIT_AUTHOR_EMAIL=parser@example.invalid",
		"GIT_AUTHOR_DATE=2001-02-03T04:05:06Z",
		"GIT_COMMITTER_NAME=Parser Test",
		"GIT_COMMITTER_EMAIL=parser@example.invalid",
		"GIT_COMMITTER_DATE=2001-02-03T04:05:06Z",
	)
	return cmd
}

// Run runs git in dir and returns its stdout, failing the test on error.
func (g *parserGit) Run(dir string, args ...string) []byte {
	g.t.Helper()
	cmd := g.cmd(dir, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		g.t.Fatalf("git %q in %s: %v\n%s", args, dir, err, stderr.String())
	}
	return out
}

// RunMayFail runs git in dir for its effect, tolerating a non-zero exit.
func (g *parserGit) RunMayFail(dir string, args ...string) {
	g.t.Helper()
	cmd := g.cmd(dir, args...)
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			g.t.Fatalf("git %q in %s: %v", args, dir, err)
		}
	}
}

// Rev returns the object id rev names in dir.
func (g *parserGit) Rev(dir, rev string) string {
	g.t.Helper()
	return strings.TrimSpace(string(g.Run(dir, "rev-parse", "--verify", rev)))
}

// ParserRoot returns a fresh temporary directory with symlinks resolved, as
// Git prints absolute, resolved worktree paths.
func ParserRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func WriteParserFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

const (
	FixOID1    = "2de8b8fbd05f3c157dbeb920823bb9770d22e65c"
	FixOID2    = "4ac70bf7d35e6cd4bb42ea7a96bf44cdee688e28"
	FixOIDZero = "0000000000000000000000000000000000000000"
	FixOID256  = "e24511bec1cf99f4e7a062786e7fac8c0c0e0972fdc9bde9542b07e9568aaf94"
)

// NulLines joins attribute lines NUL-terminated, as -z prints them.
func NulLines(lines ...string) []byte {
	var b []byte
	for _, l := range lines {
		b = append(b, l...)
		b = append(b, 0)
	}
	return b
}
