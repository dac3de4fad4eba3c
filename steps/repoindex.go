package steps

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/safefile"
)

// ErrNoStateHome is returned by RepositoryIndexPath when neither
// XDG_STATE_HOME nor HOME names an absolute directory: custody then keeps
// no index of repositories, and never makes one in a guessed place.
var ErrNoStateHome = errors.New("neither XDG_STATE_HOME nor HOME is set to an absolute directory, so custody keeps no index of repositories")

// repositoryIndexLimit bounds what custody reads of the index.
const repositoryIndexLimit = 16 << 20

// RepositoryIndexName is the index's file name in custody's state
// directory.
const RepositoryIndexName = "repositories.json"

// RepositoryIndexPath is where the user-level index of repositories
// lives: $XDG_STATE_HOME/custody/repositories.json, or
// $HOME/.local/state/custody/repositories.json when XDG_STATE_HOME is unset
// or not absolute (the XDG rule). getenv reads the environment (nil:
// os.Getenv). Without either it is ErrNoStateHome. fromHome says the path
// was derived from HOME: then HOME must exist before anything is made
// below it.
func RepositoryIndexPath(getenv func(string) string) (path string, fromHome bool, err error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if x := getenv("XDG_STATE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "custody", RepositoryIndexName), false, nil
	}
	if h := getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".local", "state", "custody", RepositoryIndexName), true, nil
	}
	return "", false, ErrNoStateHome
}

// ReadRepositoryIndex reads the index at path; a file that does not exist
// is an empty index.
func ReadRepositoryIndex(path string) (machine.RepositoryIndex, error) {
	b, err := safefile.Read(path, repositoryIndexLimit)
	if errors.Is(err, fs.ErrNotExist) {
		return machine.RepositoryIndex{Format: machine.RepositoryIndexFormat}, nil
	}
	if err != nil {
		return machine.RepositoryIndex{}, fmt.Errorf("read the index of repositories %s: %w", path, err)
	}
	x, err := machine.ParseRepositoryIndex(b)
	if err != nil {
		return machine.RepositoryIndex{}, fmt.Errorf("read the index of repositories %s: %w", path, err)
	}
	return x, nil
}

// RememberRepository records repo in the index at path, as custody init
// (and the first command that makes a repository's state file) does. The
// directories are made (0700) where missing, but never HOME itself when
// the path was derived from it (fromHome). The file is replaced durably
// and atomically (WriteFile). Two custody processes that record at once
// may each replace the other's file: each reads the index back and
// records again (at most a few times) until it holds its repository, so
// neither is lost. An index already holding repo is not written.
func RememberRepository(path string, fromHome bool, repo hostio.Repo, now time.Time) error {
	dir := filepath.Dir(path)
	if fromHome {
		home := filepath.Dir(filepath.Dir(filepath.Dir(dir)))
		if fi, err := os.Stat(home); err != nil || !fi.IsDir() {
			return fmt.Errorf("HOME (%s) is not a directory, so nothing is made below it", home)
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("make the directory of the index of repositories: %w", err)
	}
	entry := machine.IndexedRepository{CommonDir: repo.CommonDir, MainCheckout: repo.MainCheckout, AddedAt: now.UTC()}
	for attempt := 0; ; attempt++ {
		x, err := ReadRepositoryIndex(path)
		if err != nil {
			return err
		}
		next, changed := x.With(entry)
		if !changed {
			return nil
		}
		if attempt == 4 {
			return fmt.Errorf("another custody kept replacing the index of repositories %s", path)
		}
		b, err := json.MarshalIndent(next, "", "  ")
		if err != nil {
			return err
		}
		if err := WriteFile(path, append(b, '\n'), 0o600); err != nil {
			return err
		}
	}
}
