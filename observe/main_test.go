package observe_test

import (
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// originTemplate is the sandbox whose origin.git and clone newOrigin copies
// (TestMain builds it before any test starts; the tests only read it).
var originTemplate *sandbox

// zooTemplate is the proof zoo TestMain builds once for the run, before any
// test starts; each test that needs a zoo copies it (newProofZoo). It is set
// before the tests run and only read by them. Nil when no selected test uses
// a zoo.
var zooTemplate *proofZoo

// zooTests are the tests that use a proof zoo.
var zooTests = []string{"TestProveAllAgreesWithProve", "TestProveAllOneHeadsTroubleIsItsOwn",
	"TestRedteamBrokenObjectIsItsHeadsOwn", "TestRedteamCancelledBatch"}

// TestMain pins every git this test binary starts (the fixtures', and the
// observe.Git under test's) to an empty home and no global or system
// configuration, so a person's ~/.gitconfig cannot change what is observed.
// Setting it once for the process, before any test runs, lets the tests run
// git itself rather than a shell wrapper around it: one process per command,
// not two. It then builds the fixtures several tests copy.
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	flag.Parse()
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
	o, err := buildTemplate(filepath.Join(tmp, "origin"), func(s *sandbox) *sandbox { s.newOrigin(); return s })
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	originTemplate = o
	if selected(zooTests) {
		z, err := buildTemplate(filepath.Join(tmp, "zoo"), buildProofZoo)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		zooTemplate = z
	}
	return m.Run()
}

// selected reports whether -test.run may select one of the tests (its
// top-level pattern, read as go test reads it; when in doubt, yes).
func selected(tests []string) bool {
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

// buildTemplate builds a fixture tests copy in a sandbox at root.
func buildTemplate[F any](root string, build func(*sandbox) F) (f F, err error) {
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
// buildTemplate recovers.
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
