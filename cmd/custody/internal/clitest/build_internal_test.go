package clitest

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/custody-sh/custody/fixtures/testsize"
)

// TestPruneBuilds: the cache keeps the build just stored and the three
// most recently used others; older ones, and any unused for a day, go.
func TestPruneBuilds(t *testing.T) {
	cache := t.TempDir()
	now := time.Now()
	for name, age := range map[string]time.Duration{
		"key": 0, "a": time.Minute, "b": 2 * time.Minute, "c": 3 * time.Minute, "d": 4 * time.Minute, "e": 5 * time.Minute,
	} {
		p := filepath.Join(cache, name)
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	pruneBuilds(cache, "key")
	entries, err := os.ReadDir(cache)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if want := []string{"a", "b", "c", "key"}; !slices.Equal(got, want) {
		t.Errorf("cache holds %q; want %q", got, want)
	}
	old := filepath.Join(cache, "a")
	if err := os.Chtimes(old, now.Add(-25*time.Hour), now.Add(-25*time.Hour)); err != nil {
		t.Fatal(err)
	}
	pruneBuilds(cache, "key")
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("a build unused for a day is still cached (%v)", err)
	}
}

// TestMain runs the tests as every test package of the module does.
func TestMain(m *testing.M) {
	os.Exit(testsize.Main(m))
}
