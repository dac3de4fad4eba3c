package machine

import (
	"slices"
	"strings"
)

// ArchiveStatus is what git's index and status said of a tree when it was
// captured, beyond HEAD's tree and the tree of its files: the facts the
// build-output decision (FindBuildOutput) reads of a tree on disk that an
// archive's two trees do not give. A strip decides over them, so an
// archive is stripped of exactly what the tree's own classification would
// have discarded.
type ArchiveStatus struct {
	// IndexAdded lists the index's entries HEAD's tree does not hold
	// (staged additions, unmerged paths), with their modes.
	IndexAdded []ArchiveIndexEntry `json:"index_added"`
	// IndexRemoved lists HEAD's paths the index does not hold (staged
	// deletions, git rm --cached).
	IndexRemoved []string `json:"index_removed"`
	// IgnoredDirs lists the directories status reported ignored as a whole
	// (it did not enter them), other than the build output left out.
	IgnoredDirs []string `json:"ignored_dirs"`
}

// ArchiveIndexEntry is one index entry: its path and git mode.
type ArchiveIndexEntry struct {
	Path string `json:"path"`
	Mode string `json:"mode"`
}

// CaptureStatus is the ArchiveStatus of a tree whose HEAD's tree holds
// head, whose index holds index, whose status reported ignored (an ignored
// directory reported whole ends in "/"), and whose build output left is
// left out of its archive. Lists are sorted and never nil.
func CaptureStatus(head, index []TrackedEntry, ignored []string, left []DiscardedDir) ArchiveStatus {
	s := ArchiveStatus{IndexAdded: []ArchiveIndexEntry{}, IndexRemoved: []string{}, IgnoredDirs: []string{}}
	inHead := make(map[string]bool, len(head))
	for _, e := range head {
		inHead[e.Path] = true
	}
	inIndex := make(map[string]bool, len(index))
	for _, e := range index {
		if !inIndex[e.Path] && !inHead[e.Path] {
			s.IndexAdded = append(s.IndexAdded, ArchiveIndexEntry{Path: e.Path, Mode: e.Mode})
		}
		inIndex[e.Path] = true
	}
	for _, e := range head {
		if !inIndex[e.Path] {
			s.IndexRemoved = append(s.IndexRemoved, e.Path)
		}
	}
	for _, p := range ignored {
		d, whole := strings.CutSuffix(p, "/")
		if whole && !slices.ContainsFunc(left, func(l DiscardedDir) bool { return d == l.Path || strings.HasPrefix(d, l.Path+"/") }) {
			s.IgnoredDirs = append(s.IgnoredDirs, d)
		}
	}
	slices.SortFunc(s.IndexAdded, func(a, b ArchiveIndexEntry) int { return strings.Compare(a.Path, b.Path) })
	slices.Sort(s.IndexRemoved)
	slices.Sort(s.IgnoredDirs)
	s.IgnoredDirs = slices.Compact(s.IgnoredDirs)
	return s
}

// Index is the index the status was captured with: head less IndexRemoved,
// with IndexAdded.
func (s ArchiveStatus) Index(head []TrackedEntry) []TrackedEntry {
	out := make([]TrackedEntry, 0, len(head)+len(s.IndexAdded))
	for _, e := range head {
		if _, gone := slices.BinarySearch(s.IndexRemoved, e.Path); !gone {
			out = append(out, e)
		}
	}
	for _, e := range s.IndexAdded {
		out = append(out, TrackedEntry{Path: e.Path, Mode: e.Mode})
	}
	return out
}

// invalid reports the first path of s that is not a safe tree path, or a
// list that is not sorted (IndexRemoved is searched by bisection).
func (s ArchiveStatus) invalid() (string, bool) {
	for _, e := range s.IndexAdded {
		if !TreePathSafe(e.Path) || e.Mode == "" {
			return e.Path, true
		}
	}
	for _, ps := range [][]string{s.IndexRemoved, s.IgnoredDirs} {
		for _, p := range ps {
			if !TreePathSafe(p) {
				return p, true
			}
		}
	}
	if !slices.IsSorted(s.IndexRemoved) {
		return "index_removed", true
	}
	return "", false
}
