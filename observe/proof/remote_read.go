package proof

import (
	"context"
	"fmt"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
)

// remoteSource is one configured remote as custody asks it. Its URL value
// is read from git's configuration (never from text git printed for a
// person), and that one value is what is identified, given to ls-remote
// and fetched from: what custody proves against is exactly what git
// reads for the remote (docs/decisions/0223-remotes-read-from-config.md).
type remoteSource struct {
	name string
	// url is the remote's first url value, as configured: git fetches
	// from it, and it is the argument of ls-remote and fetch.
	url string
	// read is the URL git reads for url (its insteadOf rewrite), as `git
	// ls-remote --get-url` prints it when git could read url as something
	// else (a rewrite is configured, or url looks like a remote's name).
	read string
	// local is the absolute path git reads, when read names a local
	// repository.
	local string
	// global and opts carry the remote's own settings to a command given
	// the URL: -c options before the subcommand, options after it.
	global, opts []string
	// push lists where `git push NAME` sends, as git rewrites it.
	push []pushDest
	// refused, when set, says why the remote proves nothing; it is then
	// not asked at all.
	refused *machine.RemoteFailure
	// borrows is the remote's git dir when its object store borrows this
	// repository's objects.
	borrows string
	// shallow is set when the repository the remote reads is shallow.
	shallow *shallowRepo
}

// memoKey names the remote by its name and URL, for Git.unanswered.
func (s *remoteSource) memoKey() string { return s.name + "\x00" + s.url }

// shown is the remote's URL as a message may show it: credentials
// removed, control characters escaped.
func (s *remoteSource) shown() string { return shownURL(s.url) }

func shownURL(url string) string { return machine.EscapeControl(machine.RedactCredentials(url)) }

// refuse records that the remote proves nothing, and why.
func (s *remoteSource) refuse(why string) {
	f := remoteRefusal(s.name, s.url, why)
	s.refused = &f
}

// args is a command given the remote's URL: git, the remote's -c
// settings, the subcommand with its flags, the remote's options, "--",
// the URL and then rest.
func (s *remoteSource) args(sub []string, rest ...string) []string {
	out := append(append([]string{}, s.global...), sub...)
	out = append(append(out, s.opts...), "--", s.url)
	return append(out, rest...)
}

// askError is err of a command given the remote's URL, with the URL's
// credentials removed wherever the error quotes it, in one line (control
// characters escaped).
func (s *remoteSource) askError(err error) error {
	msg := err.Error()
	if s.url != "" {
		msg = strings.ReplaceAll(msg, s.url, s.shown())
	}
	return &askError{msg: machine.EscapeControl(machine.RedactCredentials(msg)), err: err}
}

// askError is a remote's failure as shown (its URL as custody shows it,
// credentials removed), still matching what it wraps (a *TimeoutError).
type askError struct {
	msg string
	err error
}

func (e *askError) Error() string { return e.msg }
func (e *askError) Unwrap() error { return e.err }

// readRemoteConfig parses git's configuration as git reads it (listing,
// hostio.ConfigList: `git config -z --list`, includes and all) and returns
// it with one source for every Remote that has a url. Nothing is asked of
// any remote yet.
func readRemoteConfig(listing []byte) (RemoteConfig, []*remoteSource, error) {
	cfg, err := ParseRemoteConfig(listing)
	if err != nil {
		return RemoteConfig{}, nil, fmt.Errorf("read the remotes: %w", err)
	}
	var srcs []*remoteSource
	for _, r := range cfg.Remotes {
		if len(r.URLs) == 0 && len(r.ResetURLs) == 0 {
			continue // nothing to fetch from: not a remote custody can ask
		}
		s := &remoteSource{name: r.Name}
		if len(r.URLs) > 0 {
			s.url = r.URLs[0]
		}
		if r.UploadPack != "" {
			s.opts = append(s.opts, "--upload-pack="+r.UploadPack)
		}
		if r.Proxy != "" {
			s.global = append(s.global, "-c", "http.proxy="+r.Proxy)
		}
		if r.ProxyAuthMethod != "" {
			s.global = append(s.global, "-c", "http.proxyAuthMethod="+r.ProxyAuthMethod)
		}
		srcs = append(srcs, s)
	}
	return cfg, srcs, nil
}

// resolve settles which URL value git fetches the remote from, what git
// reads for it, where `git push` sends, and identifies a local
// repository: one that is this repository, cannot be identified, or is
// read through a remote helper is refused; borrowing and shallow
// repositories are noted. It starts git only where git could read the
// value otherwise than as written.
func (s *remoteSource) resolve(ctx context.Context, g *hostio.Git, repo hostio.Repo, cfg RemoteConfig) error {
	r, _ := cfg.Remote(s.name)
	urls := r.URLs
	if r.ResetURLs != nil && first(r.ResetURLs) != first(r.URLs) {
		// An empty url value: older git lists it, newer git reads it as
		// clearing the values before it. Which one this git is, git
		// says: the URL it reads for the remote's name.
		byName, err := getURL(ctx, g, repo, s.name)
		if err != nil {
			return s.askError(err)
		}
		switch {
		case len(r.URLs) > 0 && cfg.ReadURL(r.URLs[0]) == byName:
		case len(r.ResetURLs) > 0 && cfg.ReadURL(r.ResetURLs[0]) == byName:
			urls = r.ResetURLs
		default:
			s.refuse(fmt.Sprintf("cannot be read exactly: git reads its url as %s, which none of its url values reads as", shownURL(byName)))
			return nil
		}
		s.url = first(urls)
	}
	s.push = cfg.pushDests(urls, r.PushURLs)
	if s.url == "" {
		s.refuse("has an empty URL, so it proves nothing")
		return nil
	}
	if r.VCS != "" {
		s.refuse("is read through the remote helper git-remote-" + machine.EscapeControl(r.VCS) + " (remote." + machine.EscapeControl(s.name) + ".vcs), which custody does not ask, so it proves nothing")
		return nil
	}
	s.read = s.url
	if cfg.Rewrites() || cfg.nickLike(s.url) {
		read, err := getURL(ctx, g, repo, s.url)
		if err != nil {
			return s.askError(err)
		}
		s.read = read
	}
	p, local := LocalRemotePath(s.read, repo.MainCheckout)
	if !local {
		return nil
	}
	s.local = p
	id, err := identifyRemote(repo, p)
	switch {
	case err != nil:
		s.refuse("cannot be identified, so it proves nothing: " + err.Error())
	case id.Self != "":
		s.refuse("is this repository itself (" + id.Self + "): its refs are local refs, never proof")
	default:
		s.borrows, s.shallow = id.Borrows, id.Shallow
	}
	return nil
}

// getURL is `git ls-remote --get-url -- arg`: the URL git reads for arg,
// a remote's name or a URL (rewritten, or a remote's URL when git takes
// arg as a remote's name), printed as it is and one newline. It contacts
// nothing.
func getURL(ctx context.Context, g *hostio.Git, repo hostio.Repo, arg string) (string, error) {
	out, err := g.Observe(ctx, repo.MainCheckout, "ls-remote", "--get-url", "--", arg)
	if err != nil {
		return "", err
	}
	url, ok := strings.CutSuffix(string(out), "\n")
	if !ok {
		return "", hostio.MalformedAt("git ls-remote --get-url", "no newline after the URL")
	}
	return url, nil
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}
