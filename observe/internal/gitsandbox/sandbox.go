// Package gitsandbox is the tests' git sandbox: repositories built with the real
// git in a temporary directory, in an isolated, deterministic environment,
// for the tests of observe and its subpackages.
package gitsandbox

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/custody-sh/custody/fixtures/testsize"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/proof"
)

// Sandbox is a set of repositories in one temporary directory, built with
// the real git in an isolated, deterministic environment. Fixture commands
// Get their environment explicitly (never t.Setenv), so tests using a
// Sandbox may run in parallel.
type Sandbox struct {
	T    fixtureT
	Root string
	home string
	Tick int
	// G is the observe.Git under test. observe.Git runs git with the test
	// process's environment plus its own fixed variables; TestMain pins
	// that environment's HOME and global configuration, so the user's
	// ~/.gitconfig cannot change what is observed.
	G *hostio.Git
	// Remote is the bare repository registered as origin by newOrigin.
	Remote string
}

// fixtureT is what a sandbox needs of its test: a *testing.T, or TestMain's
// stand-in while it builds the templates tests copy.
type fixtureT interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

func NewSandbox(t *testing.T) *Sandbox {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return newSandboxAt(t, root)
}

// newSandboxAt makes a sandbox in root, an empty directory named by its
// resolved path.
func newSandboxAt(t fixtureT, root string) *Sandbox {
	t.Helper()
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	if gitPath, err = filepath.Abs(gitPath); err != nil {
		t.Fatal(err)
	}
	s := &Sandbox{T: t, Root: root, home: filepath.Join(root, "home")}
	if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(s.home, 0o755); err != nil {
		t.Fatal(err)
	}
	s.G = hostio.NewGit(&hostio.Runner{})
	s.G.Bin = gitPath
	return s
}

// Env is the environment of one fixture git command; every command gets a
// later timestamp, so commits are distinct and runs reproducible.
func (s *Sandbox) Env() []string {
	s.Tick++
	date := fmt.Sprintf("@%d +0000", 1767225600+s.Tick)
	env := []string{
		"HOME=" + s.home,
		"XDG_CONFIG_HOME=" + filepath.Join(s.home, ".config"),
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Sandbox", "GIT_AUTHOR_EMAIL=sandbox@example.invalid", "GIT_AUTHOR_DATE=" + date,
		"GIT_COMMITTER_NAME=Sandbox", "GIT_COMMITTER_EMAIL=sandbox@example.invalid", "GIT_COMMITTER_DATE=" + date,
		"GIT_EDITOR=true", "GIT_SEQUENCE_EDITOR=true", "GIT_MERGE_AUTOEDIT=no", "GIT_TERMINAL_PROMPT=0",
		"LC_ALL=C", "TZ=UTC",
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "PATH" || k == "TMPDIR" || k == "GOCOVERDIR" {
			env = append(env, kv)
		}
	}
	return env
}

// GitRaw runs git in dir and returns its untouched stdout; a failure fails
// the test.
func (s *Sandbox) GitRaw(dir string, args ...string) []byte {
	s.T.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = s.Env()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		s.T.Fatalf("git %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, stderr.String())
	}
	return out
}

// Git runs git in dir and returns its stdout without the final newline.
func (s *Sandbox) Git(dir string, args ...string) string {
	s.T.Helper()
	return strings.TrimRight(string(s.GitRaw(dir, args...)), "\n")
}

// TryGit runs git in dir and returns its combined output and error.
func (s *Sandbox) TryGit(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = s.Env()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// GitFails runs a git command that must stop with a non-zero exit (a
// conflict), failing the test if it succeeds.
func (s *Sandbox) GitFails(dir string, args ...string) {
	s.T.Helper()
	if out, err := s.TryGit(dir, args...); err == nil {
		s.T.Fatalf("git %s (in %s) succeeded, want it to stop:\n%s", strings.Join(args, " "), dir, out)
	}
}

func (s *Sandbox) Write(dir, name, content string) {
	s.T.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		s.T.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		s.T.Fatal(err)
	}
}

// CommitFile writes one file, commits everything in dir and returns HEAD.
func (s *Sandbox) CommitFile(dir, name, content string) string {
	s.T.Helper()
	s.Write(dir, name, content)
	return s.CommitAll(dir, "change "+name)
}

// CommitAll commits everything in dir and returns the new commit: two git
// commands, the commit's id read from the summary line git prints
// ("[main 0123…] msg", in full with core.abbrev=no).
func (s *Sandbox) CommitAll(dir, msg string) string {
	s.T.Helper()
	s.Git(dir, "add", "-A")
	out := s.Git(dir, "-c", "core.abbrev=no", "commit", "-m", msg)
	first, _, _ := strings.Cut(out, "\n")
	if inside, _, ok := strings.Cut(strings.TrimPrefix(first, "["), "] "); ok && strings.HasPrefix(first, "[") {
		if f := strings.Fields(inside); len(f) > 0 && (len(f[len(f)-1]) == 40 || len(f[len(f)-1]) == 64) {
			return f[len(f)-1]
		}
	}
	s.T.Fatalf("git commit (in %s) printed %q, not a summary naming the commit", dir, out)
	return ""
}

func (s *Sandbox) Rev(dir, rev string) string {
	s.T.Helper()
	return s.Git(dir, "rev-parse", "--verify", "-q", rev)
}

// NewOrigin makes the bare repository origin.git and a clone "repo" with one
// Commit (README) on main, pushed. It returns the clone. The pair is a copy
// of the one TestMain built (originTemplate): the same commit, made by
// copying files instead of by seven git commands.
func (s *Sandbox) NewOrigin() string {
	s.T.Helper()
	if originTemplate != nil {
		return s.CopyOrigin(originTemplate)
	}
	s.Remote = filepath.Join(s.Root, "origin.git")
	s.Git(s.Root, "init", "-q", "--bare", "-b", "main", s.Remote)
	dir := filepath.Join(s.Root, "repo")
	s.Git(s.Root, "init", "-q", "-b", "main", dir)
	s.CommitFile(dir, "README", "fixture\n")
	s.Git(dir, "remote", "add", "origin", s.Remote)
	s.Git(dir, "push", "-q", "-u", "origin", "main")
	return dir
}

// CopyOrigin copies from's origin.git and clone "repo" into s, whose root
// holds neither, and points the clone's origin at the copy. The copy's
// commits are from's, and its fixture commands go on from from's clock.
// It returns the clone.
func (s *Sandbox) CopyOrigin(from *Sandbox) string {
	s.T.Helper()
	for _, name := range []string{"origin.git", "repo"} {
		if err := copyTree(filepath.Join(from.Root, name), filepath.Join(s.Root, name)); err != nil {
			s.T.Fatal(err)
		}
	}
	s.Remote = filepath.Join(s.Root, "origin.git")
	s.Tick = from.Tick
	dir := filepath.Join(s.Root, "repo")
	s.Git(dir, "remote", "set-url", "origin", s.Remote)
	return dir
}

func (s *Sandbox) Discover(dir string) hostio.Repo {
	s.T.Helper()
	repo, err := gitfiles.Discover(context.Background(), s.G, dir)
	if err != nil {
		s.T.Fatalf("Discover(%s): %v", dir, err)
	}
	return repo
}

func (s *Sandbox) Advertise(repo hostio.Repo) *proof.RemoteView {
	s.T.Helper()
	v, err := proof.Advertise(context.Background(), s.G, repo)
	if err != nil {
		s.T.Fatalf("Advertise: %v", err)
	}
	return v
}

func (s *Sandbox) Prove(repo hostio.Repo, head string, v *proof.RemoteView) *machine.Proof {
	s.T.Helper()
	p, err := proof.Prove(context.Background(), s.G, repo, head, v)
	if err != nil {
		s.T.Fatalf("Prove(%s): %v", head, err)
	}
	return p
}

// ResultOpts compare ProveAll's results: their proofs as ProofOpts do,
// their errors by message.
var ResultOpts = cmp.Options{ProofOpts, cmp.Comparer(func(a, b error) bool {
	return (a == nil) == (b == nil) && (a == nil || a.Error() == b.Error())
})}

// GitInput runs git in dir with stdin and returns its stdout.
func (s *Sandbox) GitInput(dir string, stdin []byte, args ...string) []byte {
	s.T.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = s.Env()
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		s.T.Fatalf("git %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, stderr.String())
	}
	return out
}

// ForEachRef lists every ref of the repository at dir with its value.
func (s *Sandbox) ForEachRef(dir string) string {
	s.T.Helper()
	return s.Git(dir, "for-each-ref", "--format=%(refname) %(objectname) %(symref)")
}

// ProofOpts compare proofs with the covered commits in any order.
var ProofOpts = cmp.Options{cmpopts.SortSlices(func(a, b string) bool { return a < b }), cmpopts.EquateEmpty()}

func CheckProof(t *testing.T, name string, got, want *machine.Proof) {
	t.Helper()
	if d := cmp.Diff(want, got, ProofOpts); d != "" {
		t.Errorf("%s: proof mismatch (-want +got):\n%s", name, d)
	}
}

func TipRefs(v *proof.RemoteView) []string {
	var out []string
	for _, t := range v.Tips {
		out = append(out, t.Remote+" "+t.Ref)
	}
	return out
}

// originTemplate is the sandbox whose origin.git and clone newOrigin copies
// (TestMain builds it before any test starts; the tests only read it).
var originTemplate *Sandbox

// RunMain pins every git this test binary starts (the fixtures', and the
// observe.Git under test's) to an empty home and no global or system
// configuration, so a person's ~/.gitconfig cannot change what is observed.
// Setting it once for the process, before any test runs, lets the tests run
// Git itself rather than a shell wrapper around it: one process per command,
// not two. It then builds the fixtures several tests copy (originTemplate,
// and what more builds in tmp) and runs the tests. TestMain calls it.
func RunMain(m *testing.M, more func(tmp string) error) int {
	flag.Parse()
	testsize.WidenParallel()
	testsize.Scratch()
	tmp, err := os.MkdirTemp("", "observe-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	if tmp, err = filepath.EvalSymlinks(tmp); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	home := filepath.Join(tmp, "home")
	for k, v := range map[string]string{
		"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
	} {
		if err := os.Setenv(k, v); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	o, err := BuildTemplate(filepath.Join(tmp, "origin"), func(s *Sandbox) *Sandbox { s.NewOrigin(); return s })
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	originTemplate = o
	if more != nil {
		if err := more(tmp); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return m.Run()
}

// Selected reports whether -test.run may select one of the tests (its
// top-level pattern, read as go test reads it; when in doubt, yes).
func Selected(tests []string) bool {
	f := flag.Lookup("test.run")
	if f == nil || f.Value.String() == "" {
		return true
	}
	pat, _, _ := strings.Cut(f.Value.String(), "/")
	re, err := regexp.Compile(pat)
	if err != nil {
		return true
	}
	for _, t := range tests {
		if re.MatchString(t) {
			return true
		}
	}
	return false
}

// BuildTemplate builds a fixture tests copy in a sandbox at root.
func BuildTemplate[F any](root string, build func(*Sandbox) F) (f F, err error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return f, err
	}
	defer func() {
		switch r := recover().(type) {
		case nil:
		case fixtureFailure:
			err = fmt.Errorf("building a test fixture in %s: %s", root, string(r))
		default:
			panic(r)
		}
	}()
	return build(newSandboxAt(mainT{}, root)), nil
}

// mainT is TestMain's stand-in for a *testing.T while it builds fixtures:
// a failure stops the build with a fixtureFailure panic, which
// BuildTemplate recovers.
type mainT struct{}

// fixtureFailure is why a fixture TestMain built failed.
type fixtureFailure string

func (mainT) Helper() {}

func (mainT) Fatal(args ...any) { panic(fixtureFailure(fmt.Sprint(args...))) }

func (mainT) Fatalf(format string, args ...any) { panic(fixtureFailure(fmt.Sprintf(format, args...))) }

// copyTree copies the directory src to dst (which must not exist): regular
// files with their mode, directories, and symbolic links as links.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.Mkdir(to, info.Mode().Perm())
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, to)
		case d.Type().IsRegular():
			return copyFile(p, to, info.Mode().Perm())
		default:
			return fmt.Errorf("copy %s: not a file, directory or link", p)
		}
	})
}

func copyFile(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Traced is a copy of the sandbox's Git whose runner writes each command
// line to buf, so a test can count the git processes one call starts.
func (s *Sandbox) Traced(buf *bytes.Buffer) *hostio.Git {
	r := *s.G.Runner
	r.Trace = buf
	g := *s.G
	g.Runner = &r
	return &g
}
