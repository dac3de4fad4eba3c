package machine

import (
	"slices"
	"strings"
)

// BuildSource gives the facts FindBuildOutput reads of one tree's
// candidate paths: a tree on disk (observe) and an archive's tree
// (archiveBuild) each give them their own way, and the one decision runs
// over them alike.
type BuildSource interface {
	// Shape is what rel (slash-separated, relative to the tree's root) is
	// and what it holds directly, before anything below it is walked
	// (Walked false).
	Shape(rel string) BuildFacts
	// Walk fills the walked facts of f (Walked, GitEntry, Special,
	// Unreadable, Escaping, Bytes) from everything below f.Path.
	Walk(f *BuildFacts)
}

// FindBuildOutput is the one decision of which paths of a tree are
// regenerable build output, for a tree on disk (a removal discards them
// with it, a capture leaves them out of its archive) and for an archive's
// tree (a strip takes them out of its patch) alike. Its facts: reported,
// the paths git's status reports untracked or ignored (an ignored
// directory reported whole ends in "/"); tracked, what the index holds;
// disposable, the approved [cleanup] disposable patterns; done, the
// directories already left out (an archive's recorded build output); and
// src, what each candidate is and holds.
//
// Each reported path and every directory above it (below the root) is a
// candidate, outermost first; a candidate that is tracked or holds a
// tracked path, or lies at or below one recognised (or done), is not
// decided. A candidate whose shape StructureKind recognises is walked and
// kept when ClassifyBuildOutput still recognises it. The result is sorted
// by path. It is pure: everything it reads, src gives.
func FindBuildOutput(src BuildSource, reported []string, tracked TrackedSet, disposable Patterns, done []string) []DiscardedDir {
	seen := map[string]bool{}
	var cands []string
	for _, p := range reported {
		for p = strings.TrimSuffix(p, "/"); p != "." && p != "" && p != "/" && !seen[p]; p = parentDir(p) {
			seen[p] = true
			cands = append(cands, p)
		}
	}
	slices.SortFunc(cands, outermostFirst)
	var out []DiscardedDir
	covered := func(p string) bool {
		for _, d := range done {
			if p == d || strings.HasPrefix(p, d+"/") {
				return true
			}
		}
		for _, d := range out {
			if strings.HasPrefix(p, d.Path+"/") {
				return true
			}
		}
		return false
	}
	for _, c := range cands {
		if covered(c) || tracked.AtOrBelow(c) {
			continue
		}
		f := src.Shape(c)
		if StructureKind(f, tracked, disposable) == BuildNone {
			continue
		}
		src.Walk(&f)
		if kind := ClassifyBuildOutput(f, tracked, disposable); kind != BuildNone {
			out = append(out, DiscardedDir{Path: c, Kind: kind, Bytes: f.Bytes})
		}
	}
	slices.SortFunc(out, func(a, b DiscardedDir) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// outermostFirst orders paths by depth, then bytewise.
func outermostFirst(a, b string) int {
	if n := strings.Count(a, "/") - strings.Count(b, "/"); n != 0 {
		return n
	}
	return strings.Compare(a, b)
}

// parentDir is the directory holding p ("." at the root).
func parentDir(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return "."
}
