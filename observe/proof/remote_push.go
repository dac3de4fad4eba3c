package proof

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
)

// pushTarget works out where a retry pushes a tree's commits so that a
// Remote custody reads advertises them afterwards. The push runs from
// inside the tree (or wherever the person is), where git reads a relative
// URL from that directory, not from the main checkout custody asks in: a
// push whose URL is relative is never advised by name. In order:
//
//  1. a remote (origin first, then as configured) whose every push URL
//     is absolute and one lands where an answering remote that holds
//     whole history is read from: `git push NAME`;
//  2. such a remote that its own push reaches, but not by name from
//     inside a tree (its URL is relative, or another of its push URLs is
//     this repository): `git push URL`, a local URL as its absolute path;
//  3. a remote whose pushurl no remote reads (the fork setup, with no
//     remote for the fork): the pushurl is added as a new remote, which
//     custody then reads, and the push goes by name;
//
// else the zero target, with why. A URL with credentials, or one the new
// Remote would read otherwise, is never chosen.
func pushTarget(cfg RemoteConfig, srcs []*remoteSource, failed map[string]bool, repo hostio.Repo) *machine.PushTarget {
	main := repo.MainCheckout
	ordered := make([]*remoteSource, 0, len(srcs))
	for _, s := range srcs {
		if s.name == "origin" {
			ordered = append(ordered, s)
		}
	}
	for _, s := range srcs {
		if s.name != "origin" {
			ordered = append(ordered, s)
		}
	}
	// Where each remote that can prove a pushed commit is read from.
	provers := map[string]string{}
	var proverOrder []*remoteSource
	var shallow []string
	for _, s := range ordered {
		if s.refused != nil || failed[s.name] || s.read == "" {
			continue
		}
		if s.shallow != nil {
			shallow = append(shallow, s.name)
			continue
		}
		if loc, ok := location(s.read, main, true); ok {
			provers[s.name] = loc
			proverOrder = append(proverOrder, s)
		}
	}
	proverAt := func(loc string, prefer string) string {
		if provers[prefer] == loc {
			return prefer
		}
		for _, p := range proverOrder {
			if provers[p.name] == loc {
				return p.name
			}
		}
		return ""
	}
	// 1. By name.
	for _, s := range ordered {
		if s.refused != nil || s.name == "" || !absolutePushes(s.push) || pushesHere(s.push, repo) {
			continue
		}
		for _, d := range s.push {
			if loc, ok := location(cfg.ReadURL(d.value), main, true); ok {
				if p := proverAt(loc, s.name); p != "" {
					return &machine.PushTarget{Remote: s.name, Proves: p}
				}
			}
		}
	}
	// 2. The URL (a local one's absolute path) of a remote the person
	// pushes to but not by name from inside a tree.
	for _, p := range proverOrder {
		if !pushesToItself(cfg, p, main) {
			continue
		}
		arg := p.local
		if arg == "" {
			arg = p.read
		}
		if _, named := cfg.Remote(arg); named || cfg.nickLike(arg) || strings.HasPrefix(arg, "-") || machine.RedactCredentials(arg) != arg {
			continue
		}
		dests := cfg.pushDests([]string{arg}, nil)
		if !absolutePushes(dests) || pushesHere(dests, repo) {
			continue
		}
		if loc, ok := location(cfg.ReadURL(dests[0].value), main, true); ok && loc == provers[p.name] {
			return &machine.PushTarget{URL: arg, Proves: p.name}
		}
	}
	// 3. The fork: its pushurl added as a remote custody reads.
	for _, s := range ordered {
		if s.refused != nil || s.name == "" || !absolutePushes(s.push) {
			continue
		}
		r, _ := cfg.Remote(s.name)
		for _, d := range s.push {
			if !slices.Contains(r.PushURLs, d.value) || !addable(cfg, d.value, repo) {
				continue
			}
			if loc, ok := location(cfg.ReadURL(d.value), main, true); ok && proverAt(loc, "") == "" {
				name := newRemoteName(cfg, "fork")
				return &machine.PushTarget{Remote: s.name, URL: d.value, AddAs: name, Proves: name}
			}
		}
	}
	why := "no remote's push lands where a remote custody reads is read from"
	if len(shallow) > 0 {
		why += "; shallow remote " + strings.Join(shallow, ", ") + " holds no history past its shallow boundary, so pushing there cannot prove what lies past it"
	}
	return &machine.PushTarget{Why: why}
}

// location names the repository a URL reads, for comparing where a push
// lands with where a remote is read from: a local path resolved against
// base (refused, unless relOK, when it is relative: it would be read from
// wherever git runs) and cleaned, or the URL itself.
func location(url, base string, relOK bool) (string, bool) {
	p, local := LocalRemotePath(url, base)
	if !local {
		return "url:" + url, true
	}
	if !relOK && relativePath(url) {
		return "", false
	}
	return "path:" + p, true
}

// relativePath reports whether url is a local path git reads relative to
// the directory it runs in.
func relativePath(url string) bool {
	if _, local := LocalRemotePath(url, "/"); !local {
		return false
	}
	return !strings.HasPrefix(url, "file://") && !filepath.IsAbs(url)
}

// absolutePushes reports whether every URL of a push is the same from
// whatever directory git runs in.
func absolutePushes(ds []pushDest) bool {
	if len(ds) == 0 {
		return false
	}
	for _, d := range ds {
		if relativePath(d.push) {
			return false
		}
	}
	return true
}

// pushesHere reports whether a push sends to this repository itself (a
// url that is its path or a linked tree's): git refuses to update a
// branch checked out there, so the push would fail.
func pushesHere(ds []pushDest, repo hostio.Repo) bool {
	for _, d := range ds {
		p, local := LocalRemotePath(d.push, repo.MainCheckout)
		if !local {
			continue
		}
		if id, err := identifyRemote(repo, p); err != nil || id.Self != "" {
			return true
		}
	}
	return false
}

// pushesToItself reports whether pushing remote s by name (from the main
// checkout) lands where it is read from: the person pushes there.
func pushesToItself(cfg RemoteConfig, s *remoteSource, main string) bool {
	own, ok := location(s.read, main, true)
	if !ok {
		return false
	}
	for _, d := range s.push {
		if loc, ok := location(cfg.ReadURL(d.value), main, true); ok && loc == own {
			return true
		}
	}
	return false
}

// addable reports whether url can be added as a remote that custody then
// reads exactly as git pushes to it: no credentials (the advice is
// recorded), no leading dash (an option to git), read as written (no insteadOf), not taken for a remote's
// name, and, when local, an absolute path to a repository that exists and
// is not this one.
func addable(cfg RemoteConfig, url string, repo hostio.Repo) bool {
	if url == "" || strings.HasPrefix(url, "-") || machine.RedactCredentials(url) != url || cfg.ReadURL(url) != url || cfg.nickLike(url) || relativePath(url) {
		return false
	}
	p, local := LocalRemotePath(url, repo.MainCheckout)
	if !local {
		return true
	}
	dirs, err := remoteGitDirs(p)
	if err != nil || len(dirs) == 0 {
		return false
	}
	id, err := identifyRemote(repo, p)
	return err == nil && id.Self == ""
}

// newRemoteName is base, or base-2, base-3, …: the first no remote has.
func newRemoteName(cfg RemoteConfig, base string) string {
	name := base
	for i := 2; ; i++ {
		if _, taken := cfg.Remote(name); !taken {
			return name
		}
		name = base + "-" + strconv.Itoa(i)
	}
}
