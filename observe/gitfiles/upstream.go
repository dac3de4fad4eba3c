package gitfiles

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/safefile"
)

// ErrConfigUnreadable is returned by ParseUpstreams for a config custody
// does not read itself exactly (an include, a continued or quoted value
// where a branch's or remote's setting is, the old [branch.name] form):
// the caller leaves the upstreams to git.
var ErrConfigUnreadable = errors.New("the config is not one custody reads exactly")

// configLimit bounds what custody reads of a repository's config file.
const configLimit = 4 << 20

// Upstream is what a branch's configuration says it tracks
// (branch.<name>.remote and branch.<name>.merge).
type Upstream struct {
	// Remote is the remote's name ("." for a local branch).
	Remote string
	// Merge is the branch on the remote (refs/heads/...).
	Merge string
	// Ref is the ref that holds the upstream's tip here, as git maps
	// Merge through the remote's fetch refspecs (refs/remotes/...), or
	// Merge itself for Remote "."; "" when no refspec maps it.
	Ref string
}

// ReadUpstreams reads the upstream of every branch that has one from the
// repository's config file, by branch name. A config custody does not read
// exactly is ErrConfigUnreadable: ask git.
func ReadUpstreams(repo hostio.Repo) (map[string]Upstream, error) {
	b, err := safefile.Read(filepath.Join(repo.CommonDir, "config"), configLimit)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]Upstream{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfigUnreadable, err)
	}
	return ParseUpstreams(b)
}

// ParseUpstreams reads branch.<name>.remote and branch.<name>.merge, and
// each remote's fetch refspecs, from the text of a git config file. It
// reads only the plain forms git itself writes: section headers with a
// quoted subsection (\" and \\ escaped), keys with an unquoted value. An
// include or includeIf section, a line continued with a backslash, the old
// [branch.name] form, a quoted or commented value, or a second merge of
// one branch, is ErrConfigUnreadable: ask git. Names may hold any byte but
// a newline.
func ParseUpstreams(b []byte) (map[string]Upstream, error) {
	type branchConf struct {
		remote, merge string
		merges        int
	}
	branches := map[string]*branchConf{}
	var order []string
	fetch := map[string][]string{}
	var section, sub string
	for n, line := range bytes.Split(b, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		if bytes.HasSuffix(line, []byte(`\`)) {
			return nil, fmt.Errorf("%w: line %d is continued", ErrConfigUnreadable, n+1)
		}
		t := bytes.TrimLeft(line, " \t")
		switch {
		case len(t) == 0, t[0] == '#', t[0] == ';':
			continue
		case t[0] == '[':
			var err error
			section, sub, err = parseSectionHeader(t)
			if err != nil {
				return nil, fmt.Errorf("%w: line %d: %v", ErrConfigUnreadable, n+1, err)
			}
			if section == "include" || section == "includeif" {
				return nil, fmt.Errorf("%w: line %d includes another file", ErrConfigUnreadable, n+1)
			}
			if section == "branch" && sub == "" || strings.HasPrefix(section, "branch.") {
				return nil, fmt.Errorf("%w: line %d: a branch section without a quoted name", ErrConfigUnreadable, n+1)
			}
			continue
		}
		if section != "branch" && section != "remote" {
			continue
		}
		key, value, err := parseConfigKey(t)
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrConfigUnreadable, n+1, err)
		}
		switch {
		case section == "branch" && (key == "remote" || key == "merge"):
			c := branches[sub]
			if c == nil {
				c = &branchConf{}
				branches[sub] = c
				order = append(order, sub)
			}
			if key == "remote" {
				c.remote = value
			} else {
				c.merge = value
				c.merges++
			}
		case section == "remote" && key == "fetch":
			fetch[sub] = append(fetch[sub], value)
		}
	}
	out := map[string]Upstream{}
	for _, name := range order {
		c := branches[name]
		if c.merges > 1 {
			return nil, fmt.Errorf("%w: branch %q merges %d branches", ErrConfigUnreadable, name, c.merges)
		}
		if c.remote == "" || c.merge == "" {
			continue // git sets no upstream without both
		}
		u := Upstream{Remote: c.remote, Merge: c.merge}
		if c.remote == "." {
			u.Ref = c.merge
		} else {
			u.Ref = mapRefspecs(fetch[c.remote], c.merge)
		}
		out[name] = u
	}
	return out, nil
}

// parseSectionHeader reads a section header line: [section] or
// [section "subsection"], the section's name folded to lower case.
func parseSectionHeader(t []byte) (section, sub string, err error) {
	end := bytes.IndexAny(t, " \t]")
	if end < 0 {
		return "", "", errors.New("a section header without ]")
	}
	section = strings.ToLower(string(t[1:end]))
	if section == "" || strings.Trim(section, "abcdefghijklmnopqrstuvwxyz0123456789-.") != "" {
		return "", "", fmt.Errorf("section %q", section)
	}
	rest := bytes.TrimLeft(t[end:], " \t")
	if len(rest) > 0 && rest[0] == '"' {
		var s strings.Builder
		i := 1
		for ; i < len(rest) && rest[i] != '"'; i++ {
			c := rest[i]
			if c == '\\' {
				i++
				if i == len(rest) || rest[i] != '"' && rest[i] != '\\' {
					return "", "", errors.New("an escape other than \\\" or \\\\ in a subsection")
				}
				c = rest[i]
			}
			s.WriteByte(c)
		}
		if i == len(rest) {
			return "", "", errors.New("an unterminated subsection")
		}
		sub, rest = s.String(), rest[i+1:]
	}
	if !bytes.HasPrefix(rest, []byte("]")) || len(bytes.TrimRight(rest[1:], " \t")) != 0 {
		return "", "", errors.New("text after a section header")
	}
	return section, sub, nil
}

// parseConfigKey reads "key = value" (or "key" alone, true) with the key
// folded to lower case; a value holding a quote, a backslash or a comment
// is not read.
func parseConfigKey(t []byte) (key, value string, err error) {
	k, v, hasValue := bytes.Cut(t, []byte("="))
	key = strings.ToLower(string(bytes.TrimRight(k, " \t")))
	if key == "" || strings.Trim(key, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
		return "", "", fmt.Errorf("key %q", key)
	}
	if !hasValue {
		return key, "true", nil
	}
	v = bytes.Trim(v, " \t")
	if bytes.ContainsAny(v, "\"\\#;") {
		return "", "", fmt.Errorf("the value of %s is quoted, escaped or commented", key)
	}
	return key, string(v), nil
}

// mapRefspecs maps ref through the first of specs (a remote's fetch
// refspecs, in order) whose source matches it, as git finds a branch's
// remote-tracking ref: "" when none does, or when a spec is one custody
// does not map (a negative one, more than one *).
func mapRefspecs(specs []string, ref string) string {
	for _, spec := range specs {
		spec = strings.TrimPrefix(spec, "+")
		src, dst, ok := strings.Cut(spec, ":")
		if !ok || strings.HasPrefix(src, "^") || dst == "" {
			if strings.HasPrefix(spec, "^") {
				return ""
			}
			continue
		}
		ss, ds := strings.Count(src, "*"), strings.Count(dst, "*")
		switch {
		case ss == 0 && ds == 0:
			if src == ref {
				return dst
			}
		case ss == 1 && ds == 1:
			pre, post, _ := strings.Cut(src, "*")
			if strings.HasPrefix(ref, pre) && strings.HasSuffix(ref, post) && len(ref) >= len(pre)+len(post) {
				mid := ref[len(pre) : len(ref)-len(post)]
				return strings.Replace(dst, "*", mid, 1)
			}
		default:
			return ""
		}
	}
	return ""
}

// ReadRemoteTips reads the tip of every remote-tracking ref
// (refs/remotes/...) from git's ref files, as git lists them: the loose
// files first, then packed-refs for the names no loose file holds. A
// symbolic ref (refs/remotes/origin/HEAD) names another tip and is left
// out. A store custody does not read exactly (reftable, a ref file that is
// neither an object id nor symbolic, a name git would not read) is
// errRefsUnreadable.
func ReadRemoteTips(repo hostio.Repo) (map[string]string, error) {
	if pi := hostio.Lstat(filepath.Join(repo.CommonDir, "reftable")); pi.State != machine.PathAbsent {
		return nil, errRefsUnreadable
	}
	out := map[string]string{}
	seen := map[string]bool{}
	root := filepath.Join(repo.CommonDir, "refs", "remotes")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root && errors.Is(err, fs.ErrNotExist) {
				return filepath.SkipDir
			}
			return errRefsUnreadable
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(filepath.Join(repo.CommonDir, "refs"), p)
		if err != nil {
			return errRefsUnreadable
		}
		name := filepath.ToSlash(rel)
		if strings.HasSuffix(name, ".lock") {
			return nil // a ref being written: git lists the ref it replaces
		}
		if !plainRefName(name) || !d.Type().IsRegular() {
			return errRefsUnreadable
		}
		b, err := safefile.Read(p, SmallFileLimit)
		if err != nil {
			return errRefsUnreadable
		}
		line := strings.TrimSuffix(string(b), "\n")
		seen["refs/"+name] = true
		switch {
		case hostio.IsHexOID(line):
			out["refs/"+name] = line
		case strings.HasPrefix(line, "ref: refs/"):
		default:
			return errRefsUnreadable
		}
		return nil
	})
	if err != nil {
		return nil, errRefsUnreadable
	}
	packed, err := safefile.Read(filepath.Join(repo.CommonDir, "packed-refs"), packedRefsLimit)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, errRefsUnreadable
	}
	refs, err := parsePackedRefs(packed)
	if err != nil {
		return nil, errRefsUnreadable
	}
	for ref, oid := range refs {
		if strings.HasPrefix(ref, "refs/remotes/") && !seen[ref] {
			out[ref] = oid
		}
	}
	return out, nil
}

// ReadBranchTips reads the tips of the named local branches from git's
// ref files (readBranches): a branch that exists nowhere is absent, a
// store custody does not read exactly is an error.
func ReadBranchTips(repo hostio.Repo, names []string) (map[string]string, error) {
	return readBranches(repo, names)
}

// looseCommitLimit bounds what custody reads of one loose commit object.
const looseCommitLimit = 1 << 20

// LooseCommitTree returns the tree id a commit names, read from the
// commit's loose object in objects (a repository's object directory): it
// must inflate to a commit of the length its header says, hash to id, and
// start with a tree line. Anything else (packed, missing, corrupt) is
// false: ask git (CommitTrees).
func LooseCommitTree(objects, id string) (string, bool) {
	format := FormatOf(id)
	if format == "" || !hostio.IsHexOID(id) {
		return "", false
	}
	f, err := os.Open(filepath.Join(objects, id[:2], id[2:]))
	if err != nil {
		return "", false
	}
	defer f.Close()
	raw, ok := inflateObject(f, "commit", looseCommitLimit)
	if !ok {
		return "", false
	}
	h := NewHash(format)
	h.Write(raw)
	if fmt.Sprintf("%x", h.Sum(nil)) != id {
		return "", false
	}
	_, body, _ := bytes.Cut(raw, []byte{0})
	line, _, _ := bytes.Cut(body, []byte("\n"))
	tree, ok := bytes.CutPrefix(line, []byte("tree "))
	if !ok || !hostio.IsHexOID(string(tree)) || FormatOf(string(tree)) != format {
		return "", false
	}
	return string(tree), true
}
