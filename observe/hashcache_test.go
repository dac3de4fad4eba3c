package observe

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
)

// cacheGit runs git in dir with no user or system configuration.
func cacheGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "HOME=/no-home",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimRight(string(out), "\n")
}

// cacheRepo is a committed repository of files (name → content) and the
// content hash cache beside it, whose clock reads a minute ahead so the
// files just written are old enough to be cached.
func cacheRepo(t *testing.T, files map[string]string) (string, *HashCache) {
	t.Helper()
	repo := t.TempDir()
	cacheGit(t, repo, "init", "-q")
	for name, content := range files {
		p := filepath.Join(repo, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cacheGit(t, repo, "add", "-A")
	cacheGit(t, repo, "commit", "-q", "-m", "files")
	if ok, _ := StampsTrusted(repo); !ok {
		t.Skip("the test directory's filesystem is not one the cache trusts")
	}
	ahead := time.Now().Add(time.Minute)
	return repo, &HashCache{Dir: filepath.Join(t.TempDir(), "cache"), Now: func() time.Time { return ahead }}
}

// account runs content accounting of repo through cache (nil: none) and
// returns the unaccounted entries, details dropped.
func account(t *testing.T, repo string, cache *HashCache) []machine.Unaccounted {
	t.Helper()
	ents, err := gitfiles.ParseLsFiles([]byte(cacheGit(t, repo, "ls-files", "-v", "-s", "-z")))
	if err != nil {
		t.Fatal(err)
	}
	us, _ := ContentCached(repo, cache, "tree", machine.Status{}, false, true, ents, nil, machine.Patterns{})
	for i := range us {
		us[i].Detail = ""
	}
	return us
}

// sameSizeRewrite overwrites name in repo with content of the same size
// and puts its mtime back (touch -d): only its ctime tells.
func sameSizeRewrite(t *testing.T, repo, name, content string) {
	t.Helper()
	p := filepath.Join(repo, filepath.FromSlash(name))
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(content)) != fi.Size() {
		t.Fatalf("rewrite of %s: %d bytes, the file has %d", name, len(content), fi.Size())
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
}

var cacheFiles = map[string]string{"a.txt": "alpha\n", "dir/b.txt": "bravo\n", "dir/c.txt": "charlie\n"}

// TestHashCacheWarmHashesNothing: the first walk reads and hashes every
// file; a second one, nothing changed, reads none and finds the same; a
// file rewritten with the same size and its mtime put back is read again
// (its ctime moved) and reported.
func TestHashCacheWarmHashesNothing(t *testing.T) {
	t.Parallel()
	repo, cache := cacheRepo(t, cacheFiles)
	if us := account(t, repo, cache); us != nil {
		t.Fatalf("clean checkout: %+v", us)
	}
	if h, r := cache.Hashed(), cache.Reused(); h != 3 || r != 0 {
		t.Fatalf("cold walk hashed %d and reused %d files, want 3 and 0", h, r)
	}
	if us := account(t, repo, cache); us != nil {
		t.Fatalf("clean checkout, warm: %+v", us)
	}
	if h, r := cache.Hashed(), cache.Reused(); h != 3 || r != 3 {
		t.Fatalf("warm walk: %d hashed and %d reused in all, want 3 and 3 (nothing read)", h, r)
	}
	sameSizeRewrite(t, repo, "dir/b.txt", "BRAVO\n")
	want := []machine.Unaccounted{{Code: machine.CodeContentDiffers, Path: "dir/b.txt"}}
	if diff := cmp.Diff(want, account(t, repo, cache)); diff != "" {
		t.Errorf("same-size rewrite, mtime restored (-want +got):\n%s", diff)
	}
	if h := cache.Hashed(); h != 4 {
		t.Errorf("after the rewrite %d files were hashed in all, want 4 (the rewritten one again)", h)
	}
	if diff := cmp.Diff(want, account(t, repo, nil)); diff != "" {
		t.Errorf("without a cache (-want +got):\n%s", diff)
	}
}

// TestHashCacheRacyClean: a file whose stamps are within the margin of the
// walk's start is never cached (every walk reads it again), so a file
// rewritten within the same second as the cache was written, same size
// and mtime put back, is read and reported.
func TestHashCacheRacyClean(t *testing.T) {
	t.Parallel()
	repo, cache := cacheRepo(t, cacheFiles)
	cache.Now = nil // the real clock: the files were written just now
	for range 2 {
		if us := account(t, repo, cache); us != nil {
			t.Fatalf("clean checkout: %+v", us)
		}
	}
	if h, r := cache.Hashed(), cache.Reused(); h != 6 || r != 0 {
		t.Fatalf("two walks of files written just now hashed %d and reused %d, want 6 and 0 (none cacheable yet)", h, r)
	}
	sameSizeRewrite(t, repo, "a.txt", "ALPHA\n")
	want := []machine.Unaccounted{{Code: machine.CodeContentDiffers, Path: "a.txt"}}
	if diff := cmp.Diff(want, account(t, repo, cache)); diff != "" {
		t.Errorf("rewrite within the second of the cache write (-want +got):\n%s", diff)
	}
}

// TestHashCacheHostile: whatever sits where a tree's cache file belongs
// (garbage, a truncated or re-versioned file, one of the other object
// format, a symlink to a valid one, forged entries with HEAD's blob under
// keys that are not the file's, written by a clock that has since gone
// back) never makes a changed file count as HEAD's: the file is read again.
func TestHashCacheHostile(t *testing.T) {
	t.Parallel()
	valid := func(t *testing.T, repo string, cache *HashCache) []byte {
		t.Helper()
		account(t, repo, cache)
		b, err := os.ReadFile(cache.CachePath("tree"))
		if err != nil {
			t.Fatalf("no cache file was written: %v", err)
		}
		return b
	}
	forged := func(t *testing.T, repo string, cache *HashCache, shift func(*statKey)) []byte {
		t.Helper()
		fi, err := os.Lstat(filepath.Join(repo, "a.txt"))
		if err != nil {
			t.Fatal(err)
		}
		k, _ := keyOf(fi)
		shift(&k)
		return encodeHashCache(gitfiles.FormatSHA1, time.Now(), map[statKey]string{k: gitfiles.BlobID(gitfiles.FormatSHA1, []byte("alpha\n"))})
	}
	for _, c := range []struct {
		name string
		// make returns what to put at the cache path, after the rewrite
		// of a.txt (nil: make did it).
		make func(t *testing.T, repo string, cache *HashCache, p string, good []byte) []byte
	}{
		{"Garbage", func(*testing.T, string, *HashCache, string, []byte) []byte { return []byte("not a cache at all\n") }},
		{"Empty", func(*testing.T, string, *HashCache, string, []byte) []byte { return []byte{} }},
		{"Truncated", func(_ *testing.T, _ string, _ *HashCache, _ string, good []byte) []byte { return good[:len(good)-7] }},
		{"FlippedByte", func(_ *testing.T, _ string, _ *HashCache, _ string, good []byte) []byte {
			b := append([]byte(nil), good...)
			b[len(b)/2] ^= 1
			return b
		}},
		{"WrongVersion", func(_ *testing.T, _ string, _ *HashCache, _ string, good []byte) []byte {
			return resum(strings.Replace(string(good[:len(good)-32]), hashCacheMagic+" 1 ", hashCacheMagic+" 2 ", 1))
		}},
		{"OtherFormat", func(_ *testing.T, _ string, _ *HashCache, _ string, good []byte) []byte {
			return resum(strings.Replace(string(good[:len(good)-32]), " sha1 ", " sha256 ", 1))
		}},
		{"ClockWentBack", func(_ *testing.T, _ string, _ *HashCache, _ string, good []byte) []byte {
			// A cache written by a walk a day ahead of the clock now.
			body := string(good[:len(good)-32])
			nl := strings.IndexByte(body, '\n')
			return resum(hashCacheHeader(gitfiles.FormatSHA1, time.Now().Add(48*time.Hour)) + body[nl+1:])
		}},
		{"Symlink", func(t *testing.T, _ string, _ *HashCache, p string, good []byte) []byte {
			elsewhere := filepath.Join(t.TempDir(), "valid.hashes")
			if err := os.WriteFile(elsewhere, good, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(elsewhere, p); err != nil {
				t.Fatal(err)
			}
			return nil
		}},
		{"ForgedCtime", func(t *testing.T, repo string, cache *HashCache, _ string, _ []byte) []byte {
			return forged(t, repo, cache, func(k *statKey) { k.ctime-- })
		}},
		{"ForgedInode", func(t *testing.T, repo string, cache *HashCache, _ string, _ []byte) []byte {
			return forged(t, repo, cache, func(k *statKey) { k.ino++ })
		}},
		{"ForgedMode", func(t *testing.T, repo string, cache *HashCache, _ string, _ []byte) []byte {
			return forged(t, repo, cache, func(k *statKey) { k.mode ^= 0o100 })
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			repo, cache := cacheRepo(t, cacheFiles)
			good := valid(t, repo, cache)
			p := cache.CachePath("tree")
			sameSizeRewrite(t, repo, "a.txt", "ALPHA\n")
			if b := c.make(t, repo, cache, p, good); b != nil {
				if err := os.WriteFile(p, b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			before := cache.Hashed()
			want := []machine.Unaccounted{{Code: machine.CodeContentDiffers, Path: "a.txt"}}
			if diff := cmp.Diff(want, account(t, repo, cache)); diff != "" {
				t.Errorf("changed a.txt under a hostile cache (-want +got):\n%s", diff)
			}
			if cache.Hashed() == before {
				t.Errorf("nothing was read under a hostile cache")
			}
		})
	}
}

// resum is body with its checksum: a file whose damage is not the
// checksum's to find.
func resum(body string) []byte {
	return []byte(body + string(sumOf([]byte(body))))
}

// TestHashCacheFileRoundTrip: what is encoded is decoded, entry for entry.
func TestHashCacheFileRoundTrip(t *testing.T) {
	t.Parallel()
	ents := map[statKey]string{
		{dev: 1, ino: 2, size: 3, mtime: 4, ctime: 5, mode: 0o100644}:        gitfiles.BlobID(gitfiles.FormatSHA1, []byte("x")),
		{dev: 9, ino: 1 << 40, size: 0, mtime: -1, ctime: 7, mode: 0o100755}: gitfiles.BlobID(gitfiles.FormatSHA1, nil),
	}
	now := time.Now()
	got := decodeHashCache(encodeHashCache(gitfiles.FormatSHA1, now, ents), gitfiles.FormatSHA1, now)
	if diff := cmp.Diff(ents, got, cmp.AllowUnexported(statKey{})); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if got := decodeHashCache(encodeHashCache(gitfiles.FormatSHA1, now, ents), gitfiles.FormatSHA256, now); got != nil {
		t.Errorf("a sha1 cache read as sha256: %v", got)
	}
}

// TestPruneHashCache: the cache files of trees without an admin entry and
// a killed writer's temporary file go; a live tree's stays.
func TestPruneHashCache(t *testing.T) {
	t.Parallel()
	common := t.TempDir()
	repo := hostio.Repo{CommonDir: common}
	if err := os.MkdirAll(repo.AdminDir("live-1a2b3c"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := NewHashCache(repo)
	if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"live-1a2b3c.hashes", "gone-4d5e6f.hashes", "live-1a2b3c.hashes.tmp-123"} {
		if err := os.WriteFile(filepath.Join(c.Dir, name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	PruneHashCache(repo)
	ents, err := os.ReadDir(c.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range ents {
		got = append(got, d.Name())
	}
	if diff := cmp.Diff([]string{"live-1a2b3c.hashes"}, got); diff != "" {
		t.Errorf("after pruning (-want +got):\n%s", diff)
	}
}
