package proof

import (
	"bytes"
	"fmt"
	"github.com/custody-sh/custody/observe/hostio"
	"strings"
)

// RemoteConfig is what git's configuration says about remotes, read from
// `git config -z --list` the way git's remote.c reads it: every remote
// with its url and pushurl values in order, the settings that change how
// it is asked, and the url.<base>.insteadOf and pushInsteadOf rewrites.
// Values are bytes exactly as configured: a newline, a tab or a byte that
// is not UTF-8 inside a URL stays inside that URL
// (docs/decisions/0223-remotes-read-from-config.md).
type RemoteConfig struct {
	// Remotes lists every remote that has at least one key, in the order
	// Git first meets it.
	Remotes []ConfiguredRemote
	// rewrites and pushRewrites are url.<base>.insteadOf and
	// url.<base>.pushInsteadOf, in the order git first meets each base.
	rewrites, pushRewrites []urlRewrite
}

// ConfiguredRemote is one remote.<name>.* section as git reads it.
type ConfiguredRemote struct {
	// Name is the remote's name, the subsection's bytes.
	Name string
	// URLs are the remote.<name>.url values, in order: git fetches from,
	// and ls-remote asks, the first; a push goes to all of them when
	// there is no pushurl.
	URLs []string
	// ResetURLs is URLs as a git that reads an empty url value as
	// clearing the list before it reads them; nil when no value is empty
	// (both readings agree).
	ResetURLs []string
	// PushURLs are the remote.<name>.pushurl values, in order.
	PushURLs []string
	// UploadPack, VCS, Proxy and ProxyAuthMethod are the last
	// Remote.<name>.uploadpack, .vcs, .proxy and .proxyAuthMethod.
	UploadPack, VCS, Proxy, ProxyAuthMethod string
}

// urlRewrite is one url.<base> section: URLs starting with one of its
// prefixes are read (or pushed) with base in the prefix's place.
type urlRewrite struct {
	base     string
	prefixes []string
}

// ParseRemoteConfig reads the output of `git config -z --list`: entries
// ending in NUL, each a key, then a newline and the value unless the key
// stands alone (a boolean). It keeps what remote.c keeps: remote.<name>.*
// of every name that does not start with '/' (git warns and ignores those)
// and url.<base>.insteadOf / pushInsteadOf. A url, pushurl or rewrite key
// without a value is an error, as it is to git, and so is output that does
// not end in NUL.
func ParseRemoteConfig(b []byte) (RemoteConfig, error) {
	var c RemoteConfig
	index := map[string]int{}
	rewriteIndex := [2]map[string]int{{}, {}}
	for n := 1; len(b) > 0; n++ {
		entry, rest, ok := bytes.Cut(b, []byte{0})
		if !ok {
			return RemoteConfig{}, hostio.MalformedAt(configListWhat, "entry %d does not end in NUL", n)
		}
		b = rest
		key, value, hasValue := strings.Cut(string(entry), "\n")
		if sub, ok := strings.CutPrefix(key, "url."); ok {
			i := strings.LastIndexByte(sub, '.')
			if i < 0 {
				continue
			}
			base, variable := sub[:i], sub[i+1:]
			k := -1
			switch variable {
			case "insteadof":
				k = 0
			case "pushinsteadof":
				k = 1
			}
			if k < 0 {
				continue
			}
			if !hasValue {
				return RemoteConfig{}, errNoValue(key)
			}
			list := &c.rewrites
			if k == 1 {
				list = &c.pushRewrites
			}
			j, seen := rewriteIndex[k][base]
			if !seen {
				j = len(*list)
				rewriteIndex[k][base] = j
				*list = append(*list, urlRewrite{base: base})
			}
			(*list)[j].prefixes = append((*list)[j].prefixes, value)
			continue
		}
		sub, ok := strings.CutPrefix(key, "remote.")
		if !ok {
			continue
		}
		i := strings.LastIndexByte(sub, '.')
		if i < 0 {
			continue // remote.pushDefault and the like: no remote
		}
		name, variable := sub[:i], sub[i+1:]
		if strings.HasPrefix(name, "/") {
			continue
		}
		j, seen := index[name]
		if !seen {
			j = len(c.Remotes)
			index[name] = j
			c.Remotes = append(c.Remotes, ConfiguredRemote{Name: name})
		}
		r := &c.Remotes[j]
		var field *string
		switch variable {
		case "url", "pushurl":
		case "uploadpack":
			field = &r.UploadPack
		case "vcs":
			field = &r.VCS
		case "proxy":
			field = &r.Proxy
		case "proxyauthmethod":
			field = &r.ProxyAuthMethod
		default:
			continue
		}
		if !hasValue {
			return RemoteConfig{}, errNoValue(key)
		}
		switch {
		case field != nil:
			*field = value
		case variable == "pushurl":
			r.PushURLs = append(r.PushURLs, value)
		case value == "":
			if r.ResetURLs == nil {
				r.ResetURLs = append([]string{}, r.URLs...)
			}
			r.URLs = append(r.URLs, value)
			r.ResetURLs = r.ResetURLs[:0]
		default:
			r.URLs = append(r.URLs, value)
			if r.ResetURLs != nil {
				r.ResetURLs = append(r.ResetURLs, value)
			}
		}
	}
	return c, nil
}

const configListWhat = "git config -z --list"

// errNoValue is the error of a key git cannot read without a value: git
// itself stops on it, so no remote can be asked until it is fixed.
func errNoValue(key string) error {
	return fmt.Errorf("git configuration %s has no value, so git cannot read the remotes either; give it one (git config --edit)", key)
}

// Rewrites reports whether any url.<base>.insteadOf is configured: only
// then can git read a URL as another.
func (c RemoteConfig) Rewrites() bool { return len(c.rewrites) > 0 }

// Remote returns the remote named name.
func (c RemoteConfig) Remote(name string) (ConfiguredRemote, bool) {
	for _, r := range c.Remotes {
		if r.Name == name {
			return r, true
		}
	}
	return ConfiguredRemote{}, false
}

// alias is git's alias_url: url with the longest prefix any rewrite lists
// replaced by that rewrite's base (the first of equally long ones), and
// false when no prefix matches.
func alias(url string, rewrites []urlRewrite) (string, bool) {
	best, bestLen := -1, -1
	for i, r := range rewrites {
		for _, p := range r.prefixes {
			if strings.HasPrefix(url, p) && len(p) > bestLen {
				best, bestLen = i, len(p)
			}
		}
	}
	if best < 0 {
		return url, false
	}
	return rewrites[best].base + url[bestLen:], true
}

// ReadURL is the URL git reads for url (fetch and ls-remote): url with
// its insteadOf rewrite applied.
func (c RemoteConfig) ReadURL(url string) string {
	u, _ := alias(url, c.rewrites)
	return u
}

// pushDest is one URL `git push` sends to, and the URL value whose read
// URL names the same repository: the pushurl or url value itself, or, for
// a url that a pushInsteadOf rewrites, the url (the rewrite says both
// reach one repository).
type pushDest struct {
	push  string
	value string
}

// pushDests are where `git push` sends for a remote with these url and
// pushurl values, as remote.c's alias_all_urls makes them: every pushurl,
// insteadOf-rewritten, when there is one; else the urls a pushInsteadOf
// rewrites, rewritten so, when there is one; else every url,
// insteadOf-rewritten. A URL given to `git push` itself is a remote with
// that one url.
func (c RemoteConfig) pushDests(urls, pushURLs []string) []pushDest {
	var out []pushDest
	for _, p := range pushURLs {
		out = append(out, pushDest{push: c.ReadURL(p), value: p})
	}
	if len(out) > 0 {
		return out
	}
	for _, u := range urls {
		if a, ok := alias(u, c.pushRewrites); ok {
			out = append(out, pushDest{push: a, value: u})
		}
	}
	if len(out) > 0 {
		return out
	}
	for _, u := range urls {
		out = append(out, pushDest{push: c.ReadURL(u), value: u})
	}
	return out
}

// PushURLs are the URLs `git push` sends to for a remote with these url
// and pushurl values (pushDests).
func (c RemoteConfig) PushURLs(urls, pushURLs []string) []string {
	var out []string
	for _, d := range c.pushDests(urls, pushURLs) {
		out = append(out, d.push)
	}
	return out
}

// nickLike reports whether git could take s, given where a repository is
// expected, as a remote's name rather than a URL: it names a configured
// Remote, or it is what git calls a valid nick (not empty, ".", ".." and
// without '/'), which git looks up in $GIT_DIR/remotes and
// $GIT_DIR/branches.
func (c RemoteConfig) nickLike(s string) bool {
	if _, ok := c.Remote(s); ok {
		return true
	}
	return s != "" && s != "." && s != ".." && !strings.Contains(s, "/")
}

// String renders the configuration for test failures.
func (r ConfiguredRemote) String() string {
	return fmt.Sprintf("%q url=%q pushurl=%q", r.Name, r.URLs, r.PushURLs)
}
