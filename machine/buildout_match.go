package machine

import (
	"fmt"
	"path"
	"strings"
)

// Patterns is a compiled list of gitignore-syntax patterns matched against
// slash-separated paths relative to a tree's root ([cleanup] disposable).
// The zero value matches nothing.
type Patterns struct {
	rules []pattern
}

// pattern is one compiled gitignore line.
type pattern struct {
	text     string
	negate   bool
	dirOnly  bool
	anchored bool
	segs     []string
}

// ParsePatterns compiles gitignore-syntax lines: blank lines and lines
// starting with "#" are ignored; "!" negates (a later line wins); a
// trailing "/" matches only directories; a pattern with a "/" anywhere
// but at its end is relative to the root, one without matches a name at
// any depth; "*", "?" and "[…]" match within one path component and "**"
// across any number of them. A path whose parent directory matches
// matches too. A malformed pattern is an error naming it.
func ParsePatterns(lines []string) (Patterns, error) {
	var ps Patterns
	for _, raw := range lines {
		if strings.ContainsAny(raw, "\n\r\x00") {
			return Patterns{}, fmt.Errorf("pattern %q holds a line break or NUL", raw)
		}
		line := strings.TrimRight(raw, " \t")
		if strings.HasSuffix(raw, "\\ ") {
			line += " "
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		p := pattern{text: raw}
		switch {
		case strings.HasPrefix(line, "!"):
			p.negate, line = true, line[1:]
		case strings.HasPrefix(line, `\!`), strings.HasPrefix(line, `\#`):
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			p.dirOnly, line = true, strings.TrimRight(line, "/")
		}
		if strings.Contains(line, "/") {
			p.anchored = true
		}
		line = strings.TrimPrefix(line, "/")
		if line == "" {
			return Patterns{}, fmt.Errorf("pattern %q matches nothing", raw)
		}
		for _, seg := range strings.Split(line, "/") {
			if seg == "" {
				return Patterns{}, fmt.Errorf("pattern %q has an empty path component", raw)
			}
			if seg == "**" && len(p.segs) > 0 && p.segs[len(p.segs)-1] == "**" {
				continue // "**/**" is "**"
			}
			if seg != "**" {
				seg = strings.ReplaceAll(seg, "[!", "[^")
				if _, err := path.Match(seg, ""); err != nil {
					return Patterns{}, fmt.Errorf("pattern %q: %w", raw, err)
				}
			}
			p.segs = append(p.segs, seg)
		}
		if !p.anchored && p.segs[0] != "**" {
			p.segs = append([]string{"**"}, p.segs...)
		}
		ps.rules = append(ps.rules, p)
	}
	return ps, nil
}

// Empty reports whether no pattern was compiled.
func (ps Patterns) Empty() bool { return len(ps.rules) == 0 }

// Match reports whether rel (slash-separated, relative to the root; isDir
// when it is a directory) is matched: by the last pattern that matches it,
// or because a directory above it is matched.
func (ps Patterns) Match(rel string, isDir bool) bool {
	if len(ps.rules) == 0 {
		return false
	}
	parts := strings.Split(strings.Trim(rel, "/"), "/")
	for i := 1; i < len(parts); i++ {
		if ps.matchOne(parts[:i], true) {
			return true
		}
	}
	return ps.matchOne(parts, isDir)
}

// matchOne applies every pattern to the one path parts, the last match
// deciding.
func (ps Patterns) matchOne(parts []string, isDir bool) bool {
	matched := false
	for _, p := range ps.rules {
		if p.dirOnly && !isDir {
			continue
		}
		if matchSegs(p.segs, parts) {
			matched = !p.negate
		}
	}
	return matched
}

// matchSegs matches pattern components against path components, "**"
// standing for any number (zero included) of whole components.
func matchSegs(segs, parts []string) bool {
	if len(segs) == 0 {
		return len(parts) == 0
	}
	if segs[0] == "**" {
		if len(segs) == 1 {
			// A trailing "/**" matches what is inside, not the directory.
			return len(parts) > 0
		}
		for i := 0; i <= len(parts); i++ {
			if matchSegs(segs[1:], parts[i:]) {
				return true
			}
		}
		return false
	}
	if len(parts) == 0 {
		return false
	}
	ok, err := path.Match(segs[0], parts[0])
	return err == nil && ok && matchSegs(segs[1:], parts[1:])
}
