package remotes

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/internal/gitsandbox"
	"github.com/custody-sh/custody/observe/proof"
)

// configList builds `git config -z --list` output from key, value pairs
// (a value of "\x00" stands for a key without a value).
func configList(kv ...string) []byte {
	var b bytes.Buffer
	for i := 0; i+1 < len(kv); i += 2 {
		b.WriteString(kv[i])
		if kv[i+1] != "\x00" {
			b.WriteString("\n" + kv[i+1])
		}
		b.WriteByte(0)
	}
	return b.Bytes()
}

// TestParseRemoteConfig: remotes are read from the configuration's bytes
// as git reads them: a URL holding a newline and a tab is one URL (not a
// second remote), a name holds dots, spaces and bytes that are not UTF-8,
// a name starting with '/' is ignored, keys that are not a remote's
// (remote.pushDefault) make none, an empty url value is kept for both
// readings of it, and a url without a value is an error.
func TestParseRemoteConfig(t *testing.T) {
	t.Parallel()
	cfg, err := proof.ParseRemoteConfig(configList(
		"core.bare", "false",
		"remote.pushdefault", "origin",
		"remote.origin.url", "/srv/pub\n.worktrees/x-1a2b3c\tfoo",
		"remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*",
		"remote.a.b.url", "/srv/a.b",
		"remote.with space\xff.url", "/srv/odd path\xfe",
		"remote./abs.url", "/srv/ignored",
		"remote.origin.pushurl", "/srv/fork",
		"remote.origin.url", "/srv/second",
		"remote.reset.url", "/srv/first",
		"remote.reset.url", "",
		"remote.reset.url", "/srv/after",
		"remote.helper.vcs", "hg",
		"remote.helper.url", "/srv/hg",
		"remote.helper.uploadpack", "/opt/git-upload-pack",
		"remote.a.b.skipdefaultupdate", "\x00",
	))
	if err != nil {
		t.Fatal(err)
	}
	want := []proof.ConfiguredRemote{
		{Name: "origin", URLs: []string{"/srv/pub\n.worktrees/x-1a2b3c\tfoo", "/srv/second"}, PushURLs: []string{"/srv/fork"}},
		{Name: "a.b", URLs: []string{"/srv/a.b"}},
		{Name: "with space\xff", URLs: []string{"/srv/odd path\xfe"}},
		{Name: "reset", URLs: []string{"/srv/first", "", "/srv/after"}, ResetURLs: []string{"/srv/after"}},
		{Name: "helper", URLs: []string{"/srv/hg"}, VCS: "hg", UploadPack: "/opt/git-upload-pack"},
	}
	if diff := cmp.Diff(want, cfg.Remotes, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("remotes (-want +got):\n%s", diff)
	}
	for _, bad := range [][]byte{
		configList("remote.origin.url", "\x00"),
		configList("url./srv/.insteadof", "\x00"),
		[]byte("remote.origin.url\n/srv/x"), // no NUL at the end
	} {
		if _, err := proof.ParseRemoteConfig(bad); err == nil {
			t.Errorf("ParseRemoteConfig(%q): no error", bad)
		}
	}
	if _, err := proof.ParseRemoteConfig([]byte("remote.origin.url\n/srv/x")); !errors.Is(err, hostio.ErrMalformed) {
		t.Errorf("truncated output: %v, want ErrMalformed", err)
	}
}

// TestRemoteConfigRewrites: url.<base>.insteadOf and pushInsteadOf are
// applied as git's alias_url applies them: the longest prefix wins, the
// first of equal ones, an empty prefix matches every URL, a pushurl is
// rewritten by insteadOf only, and a url a pushInsteadOf rewrites is the
// only push URL then.
func TestRemoteConfigRewrites(t *testing.T) {
	t.Parallel()
	cfg, err := proof.ParseRemoteConfig(configList(
		"url./short/.insteadof", "gh:",
		"url./long/.insteadof", "gh:org/",
		"url./tie-second/.insteadof", "tie:",
		"url.ssh://push/.pushinsteadof", "https://pub/",
		"url./first/.insteadof", "tie:",
	))
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		"gh:me/x":     "/short/me/x",
		"gh:org/x":    "/long/x",
		"tie:x":       "/tie-second/x",
		"https://p/x": "https://p/x",
	} {
		if got := cfg.ReadURL(in); got != want {
			t.Errorf("ReadURL(%q) = %q, want %q", in, got, want)
		}
	}
	for _, c := range []struct {
		urls, push, want []string
	}{
		{urls: []string{"https://pub/a", "gh:b"}, want: []string{"ssh://push/a"}},
		{urls: []string{"gh:b"}, want: []string{"/short/b"}},
		{urls: []string{"https://pub/a"}, push: []string{"gh:org/fork"}, want: []string{"/long/fork"}},
	} {
		if got := cfg.PushURLs(c.urls, c.push); !cmp.Equal(got, c.want) {
			t.Errorf("PushURLs(%q, %q) = %q, want %q", c.urls, c.push, got, c.want)
		}
	}
	empty, err := proof.ParseRemoteConfig(configList("url./all/.insteadof", ""))
	if err != nil {
		t.Fatal(err)
	}
	if got := empty.ReadURL("x"); got != "/all/x" {
		t.Errorf("an empty insteadOf: ReadURL(x) = %q, want /all/x", got)
	}
}

// TestRemoteConfigAgreesWithGit: for remotes with odd names, several url
// values, pushurls and URLs that rewrites change, the configuration read
// from `git config -z --list` gives the URL git itself reads for each
// Remote (`git ls-remote --get-url NAME`) and the URLs it pushes to (`git
// Remote get-url --push --all NAME`).
func TestRemoteConfigAgreesWithGit(t *testing.T) {
	t.Parallel()
	s := gitsandbox.NewSandbox(t)
	dir := s.NewOrigin()
	for _, kv := range [][2]string{
		{"url./srv/short/.insteadOf", "gh:"},
		{"url./srv/long/.insteadOf", "gh:org/"},
		{"url.ssh://push.example/.pushInsteadOf", "https://pub.example/"},
		{"remote.a.b.url", "gh:org/ab"},
		{"remote.with space.url", "/srv/with space/x"},
		{"remote.with space.url", "gh:second"},
		{"remote.fork.url", "https://pub.example/up"},
		{"remote.fork.pushurl", "gh:me/fork"},
		{"remote.pushrw.url", "https://pub.example/x"},
		{"remote.pushrw.url", "gh:y"},
		{"remote.bytes\xff.url", "/srv/b\xfeytes"},
	} {
		s.Git(dir, "config", "--add", kv[0], kv[1])
	}
	cfg, err := proof.ParseRemoteConfig(s.GitRaw(dir, "config", "-z", "--list"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Remotes) != 6 {
		t.Fatalf("remotes %v, want 6", cfg.Remotes)
	}
	for _, r := range cfg.Remotes {
		read := strings.TrimSuffix(string(s.GitRaw(dir, "ls-remote", "--get-url", "--", r.Name)), "\n")
		if got := cfg.ReadURL(r.URLs[0]); got != read {
			t.Errorf("remote %q: custody reads %q, git reads %q", r.Name, got, read)
		}
		push := strings.Split(strings.TrimSuffix(string(s.GitRaw(dir, "remote", "get-url", "--push", "--all", "--", r.Name)), "\n"), "\n")
		if got := cfg.PushURLs(r.URLs, r.PushURLs); !cmp.Equal(got, push) {
			t.Errorf("remote %q: custody pushes to %q, git to %q", r.Name, got, push)
		}
	}
}

// FuzzParseRemoteConfig: any output parses without panic; what it keeps
// has no remote named with a leading '/', and a remote's first url is
// exactly the first url value the input gives it.
func FuzzParseRemoteConfig(f *testing.F) {
	for _, seed := range [][]byte{
		configList("remote.origin.url", "/srv/x\n.worktrees/y\tz"),
		configList("remote.a.b.url", "u", "remote.a.b.pushurl", "p", "url.b.insteadof", "a"),
		configList("remote.r.url", "", "remote.r.url", "x"),
		configList("remote.origin.url", "\x00"),
		[]byte("remote.x.url\nno-nul"),
		{0, 0, '\n'},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		cfg, err := proof.ParseRemoteConfig(b)
		if err != nil {
			return
		}
		first := map[string]string{}
		for _, entry := range bytes.Split(bytes.TrimSuffix(b, []byte{0}), []byte{0}) {
			key, value, ok := strings.Cut(string(entry), "\n")
			sub, isRemote := strings.CutPrefix(key, "remote.")
			i := strings.LastIndexByte(sub, '.')
			if !ok || !isRemote || i < 0 || sub[i+1:] != "url" {
				continue
			}
			if _, seen := first[sub[:i]]; !seen {
				first[sub[:i]] = value
			}
		}
		for _, r := range cfg.Remotes {
			if strings.HasPrefix(r.Name, "/") {
				t.Errorf("remote %q kept", r.Name)
			}
			if want, ok := first[r.Name]; ok && (len(r.URLs) == 0 || r.URLs[0] != want) {
				t.Errorf("remote %q: first url %q, want %q", r.Name, r.URLs, want)
			}
		}
	})
}
