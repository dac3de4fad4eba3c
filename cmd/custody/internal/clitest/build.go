package clitest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

// binaries returns a directory holding the two custody builds ("custody"
// and "custody-failpoint") of the source tree under test, and what to call
// when the tests are done with them.
//
// The builds are cached in a directory of the system's temporary
// directory named for a digest of everything that makes them: every file
// of the module but tests, test data and VCS metadata, the Go version, the
// platform and the build's environment. A cache this user does not own, or
// that cannot be made, is not used: the builds are then made in a private
// directory removed afterwards, as without a cache. Cached builds unused
// for a day, and all but the three most recently used, are removed by the
// next build.
//
// When BinariesEnv names a directory, the builds there are used and
// nothing is built: that is how a test re-run as another user
// (Unprivileged) finds the builds of the run that started it.
func binaries() (dir string, cleanup func(), err error) {
	if given := os.Getenv(BinariesEnv); given != "" {
		for _, b := range []string{"custody", "custody-failpoint"} {
			if fi, err := os.Stat(filepath.Join(given, b)); err != nil || !fi.Mode().IsRegular() {
				return "", nil, fmt.Errorf("%s=%s holds no %s build: %v", BinariesEnv, given, b, err)
			}
		}
		return given, func() {}, nil
	}
	root, err := moduleRoot()
	if err != nil {
		return "", nil, err
	}
	key, err := buildKey(root)
	if err != nil {
		return "", nil, err
	}
	cache := filepath.Join(os.TempDir(), "custody-test-bin")
	if dir, ok := cachedBuild(cache, key); ok {
		return dir, func() {}, nil
	}
	tmp, err := os.MkdirTemp("", "custody-test-bin-")
	if err != nil {
		return "", nil, err
	}
	if err := build(tmp, root); err != nil {
		os.RemoveAll(tmp)
		return "", nil, err
	}
	if dir, ok := storeBuild(cache, key, tmp); ok {
		return dir, func() {}, nil
	}
	return tmp, func() { os.RemoveAll(tmp) }, nil
}

// build makes both binaries in dir, as custody is shipped: without cgo,
// statically linked (decision 0153). They carry no VCS stamp, so one
// build serves every commit of the same sources (the version test makes
// its own stamped build).
func build(dir, root string) error {
	for _, b := range []struct{ out, tags string }{{"custody", ""}, {"custody-failpoint", "failpoint"}} {
		args := []string{"build", "-buildvcs=false", "-o", filepath.Join(dir, b.out)}
		if b.tags != "" {
			args = append(args, "-tags", b.tags)
		}
		if out, err := goTool(root, []string{"CGO_ENABLED=0"}, append(args, ImportPath)...); err != nil {
			return fmt.Errorf("build custody: %w\n%s", err, out)
		}
	}
	return nil
}

// moduleRoot is the directory holding the module's go.mod.
func moduleRoot() (string, error) {
	out, err := goTool("", nil, "env", "GOMOD")
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("go env GOMOD: not in a module")
	}
	return filepath.Dir(mod), nil
}

// buildKey digests what the builds are made from: the path and bytes of
// every file below root except _test.go files, testdata directories and
// dot directories (.git), then the toolchain and the environment go build
// reads.
func buildKey(root string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, "_test.go") || !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		fmt.Fprintf(h, "%q\n", rel)
		n, err := io.Copy(h, f)
		fmt.Fprintf(h, "\n%d\n", n)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("digest the sources under %s: %w", root, err)
	}
	fmt.Fprintf(h, "%s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	for _, k := range []string{"GOFLAGS", "GOEXPERIMENT", "GOTOOLCHAIN", "GOAMD64", "GOARM64", "GOROOT", "GOPATH", "GOWORK"} {
		fmt.Fprintf(h, "%s=%q\n", k, os.Getenv(k))
	}
	return hex.EncodeToString(h.Sum(nil))[:32], nil
}

// cachedBuild returns cache/key if it holds both builds.
func cachedBuild(cache, key string) (string, bool) {
	if !ownCacheDir(cache) {
		return "", false
	}
	dir := filepath.Join(cache, key)
	for _, b := range []string{"custody", "custody-failpoint"} {
		if fi, err := os.Lstat(filepath.Join(dir, b)); err != nil || !fi.Mode().IsRegular() {
			return "", false
		}
	}
	now := time.Now()
	_ = os.Chtimes(dir, now, now) // used: not pruned for another day
	return dir, true
}

// storeBuild moves the builds in tmp to cache/key (another package may
// have stored them first: then those are used and tmp is removed), and
// prunes builds unused for a day.
func storeBuild(cache, key, tmp string) (string, bool) {
	if err := os.Mkdir(cache, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", false
	}
	if !ownCacheDir(cache) {
		return "", false
	}
	dir := filepath.Join(cache, key)
	if err := os.Rename(tmp, dir); err != nil {
		if d, ok := cachedBuild(cache, key); ok {
			os.RemoveAll(tmp)
			return d, true
		}
		return "", false
	}
	pruneBuilds(cache, key)
	return dir, true
}

// keptBuilds is how many builds the cache keeps besides the one just
// stored: it may be in memory (testsize.Scratch), and every change to the
// sources makes another.
const keptBuilds = 3

// pruneBuilds removes from cache every build but key that was unused for
// a day, and all but the keptBuilds most recently used.
func pruneBuilds(cache, key string) {
	entries, _ := os.ReadDir(cache)
	type used struct {
		name string
		at   time.Time
	}
	var others []used
	for _, e := range entries {
		if fi, err := e.Info(); e.Name() != key && err == nil {
			others = append(others, used{e.Name(), fi.ModTime()})
		}
	}
	slices.SortFunc(others, func(a, b used) int { return b.at.Compare(a.at) })
	for i, o := range others {
		if i >= keptBuilds || time.Since(o.at) > 24*time.Hour {
			os.RemoveAll(filepath.Join(cache, o.name))
		}
	}
}
