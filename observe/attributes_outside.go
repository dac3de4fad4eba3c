package observe

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
)

// AttributesFromOutside reports whether git may apply, to some tree of repo,
// attributes that do not live in the repository: core.attributesFile set in
// any configuration git reads from the main checkout, any attr.* setting
// (attr.tree names a tree whose .gitattributes git reads instead of the
// work tree's; a later git's attr.* is taken as the same kind), the
// GIT_ATTR_SOURCE environment variable (the same as attr.tree, for every
// command custody runs, which inherit it), a conditional include
// (includeIf) anywhere in that configuration, which could set them for some
// trees only, the default global file ($XDG_CONFIG_HOME/git/attributes, else
// ~/.config/git/attributes), or the system file (/etc/gitattributes, or
// <prefix>/etc/gitattributes beside the git on PATH) unless GIT_ATTR_NOSYSTEM
// is set. Such an attribute can make git see a file's bytes as other bytes (a
// filter, an eol conversion), so plan then asks git status of every tree
// instead of calling a tree that is byte for byte its HEAD clean on its own
// (knownClean): otherwise apply's status could call the same tree changed, and
// refuse it as stale on every run. A question git cannot answer counts as
// yes. So does a partial clone (extensions.partialClone, a promisor
// remote), whose status may need objects it must fetch first. It costs one
// git process per plan (none with AttributesFromOutsideListed, which reads
// a listing the plan's remotes are read from too).
func AttributesFromOutside(ctx context.Context, g *hostio.Git, repo hostio.Repo) bool {
	b, err := g.ConfigList(ctx, repo)
	return AttributesFromOutsideListed(b, err)
}

// AttributesFromOutsideListed is AttributesFromOutside over listing, the
// configuration as hostio.ConfigList read it, or the error reading it
// failed with (which counts as yes).
func AttributesFromOutsideListed(listing []byte, listErr error) bool {
	if os.Getenv("GIT_ATTR_SOURCE") != "" {
		return true
	}
	if listErr != nil {
		return true
	}
	for _, kv := range bytes.Split(listing, []byte{0}) {
		key, _, _ := bytes.Cut(kv, []byte{'\n'})
		key = bytes.ToLower(key)
		if string(key) == "core.attributesfile" || bytes.HasPrefix(key, []byte("attr.")) || bytes.HasPrefix(key, []byte("includeif.")) {
			return true
		}
		// A partial clone fetches missing objects when status needs them
		// (a subtree of HEAD, say): offline, its status fails, so plan
		// must ask it rather than call a tree clean that apply's status
		// cannot read.
		if string(key) == "extensions.partialclone" || bytes.HasPrefix(key, []byte("remote.")) && bytes.HasSuffix(key, []byte(".promisor")) {
			return true
		}
	}
	for _, p := range outsideAttributesFiles() {
		if hostio.Lstat(p).State != machine.PathAbsent {
			return true
		}
	}
	return false
}

// outsideAttributesFiles are the attributes files git reads by default from
// outside a repository: the global one and, unless GIT_ATTR_NOSYSTEM is set,
// the system one where git's usual prefixes put it.
func outsideAttributesFiles() []string {
	var out []string
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		out = append(out, filepath.Join(x, "git", "attributes"))
	} else if h, err := os.UserHomeDir(); err == nil {
		out = append(out, filepath.Join(h, ".config", "git", "attributes"))
	}
	if os.Getenv("GIT_ATTR_NOSYSTEM") == "" {
		out = append(out, "/etc/gitattributes")
		if git, err := exec.LookPath("git"); err == nil {
			if real, err := filepath.EvalSymlinks(git); err == nil {
				git = real
			}
			out = append(out, filepath.Join(filepath.Dir(filepath.Dir(git)), "etc", "gitattributes"))
		}
	}
	return out
}
