package machine

import (
	"fmt"
	"path"
	"sort"
	"strings"
)

// Candidate is one tree a reference may name: a record, or a plan item.
type Candidate struct {
	ID string
	// Path is the tree's absolute, canonical path.
	Path string
	// Gone marks a tree that no longer exists (a tombstoned record): it
	// is matched only when no live tree matches the same way.
	Gone bool
}

// Reference is what a person typed to name a tree.
type Reference struct {
	// Text is the reference as given.
	Text string
	// Path is Text as an absolute, canonical path, resolved by the caller
	// against the directory custody runs from: always when Text reads as a
	// path (IsPathLike), else only when something exists there ("" when
	// nothing does).
	Path string
}

// IsPathLike reports whether text names a tree by path rather than by id
// or directory name: it holds a separator or is "." or "..".
func IsPathLike(text string) bool {
	return text == "." || text == ".." || strings.ContainsRune(text, '/')
}

// ResolveReference picks the one candidate ref names, trying in order, each way
// preferring live trees over gone ones:
//
//  1. the exact id;
//  2. for a path-like reference, the tree whose path is ref's path or
//     holds it (the deepest one);
//  3. the tree whose directory name (its path's last element) is ref;
//  4. the trees whose id starts with ref;
//  5. for a plain word that names an existing path (a subdirectory of
//     the tree custody runs in), the tree that holds it (the deepest).
//
// The first way that matches decides: one match is the answer, several are
// an ambiguous-reference refusal listing every candidate, and when no way
// matches it is an unknown-record refusal. retry is the command that lists
// the trees (custody list). It is pure and deterministic.
func ResolveReference(ref Reference, cands []Candidate, retry string) (Candidate, *Refusal) {
	text := ref.Text
	byPath := func(c Candidate) bool { return ref.Path != "" && within(ref.Path, c.Path) }
	type way struct {
		match func(Candidate) bool
		path  bool
	}
	ways := []way{{match: func(c Candidate) bool { return c.ID == text }}}
	if IsPathLike(text) {
		ways = append(ways, way{match: byPath, path: true})
	} else if text != "" {
		ways = append(ways,
			way{match: func(c Candidate) bool { return c.Path != "" && path.Base(c.Path) == text }},
			way{match: func(c Candidate) bool { return strings.HasPrefix(c.ID, text) }},
			way{match: byPath, path: true})
	}
	for _, w := range ways {
		live, gone := matching(cands, w.match)
		found := live
		if len(found) == 0 {
			found = gone
		}
		if w.path {
			found = deepest(found)
		}
		switch len(found) {
		case 0:
			continue
		case 1:
			return found[0], nil
		}
		return Candidate{}, ambiguous(text, found, retry)
	}
	return Candidate{}, &Refusal{Code: CodeUnknownRecord, Path: ref.Path, Retry: retry,
		Message: fmt.Sprintf("no worktree in this repository has the id, id prefix, directory name or path %q", text)}
}

// matching splits the candidates that match into live and gone ones.
func matching(cands []Candidate, match func(Candidate) bool) (live, gone []Candidate) {
	for _, c := range cands {
		if !match(c) {
			continue
		}
		if c.Gone {
			gone = append(gone, c)
		} else {
			live = append(live, c)
		}
	}
	return live, gone
}

// deepest keeps the candidates with the longest path: a path inside a tree
// nested in another names the inner one.
func deepest(cs []Candidate) []Candidate {
	best := 0
	for _, c := range cs {
		best = max(best, len(c.Path))
	}
	var out []Candidate
	for _, c := range cs {
		if len(c.Path) == best {
			out = append(out, c)
		}
	}
	return out
}

// within reports whether p is dir itself or lies below it. Both are
// clean absolute paths, compared exactly as values.
func within(p, dir string) bool {
	if dir == "" {
		return false
	}
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// ambiguous is the refusal of a reference that names several trees.
func ambiguous(text string, found []Candidate, retry string) *Refusal {
	sorted := append([]Candidate(nil), found...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	names := make([]string, len(sorted))
	for i, c := range sorted {
		names[i] = c.ID + " (" + c.Path + ")"
	}
	return &Refusal{Code: CodeAmbiguousReference, Retry: retry,
		Message: fmt.Sprintf("%q names %d worktrees: %s; name one by its full id", text, len(sorted), listSome(names, 10))}
}
