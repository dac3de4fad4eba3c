package steps

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/store"
)

// ResolveRecords turns what a person typed to name worktrees (an exact id,
// a unique id prefix, a directory name, or a path absolute or relative to
// dir) into record ids, in order and without repeats, by
// machine.ResolveReference over every worktree record (tombstoned ones
// only when nothing live matches). An unknown or ambiguous reference is a
// refusal (unknown-record, ambiguous-reference) returned as the error:
// nothing is resolved, so the command does nothing. retry is the command
// that lists what may be named.
func ResolveRecords(e *Env, dir string, refs []string, retry string) ([]string, error) {
	var cands []machine.Candidate
	listed := false
	out := make([]string, 0, len(refs))
	seen := map[string]bool{}
	for _, text := range refs {
		id := ""
		if !machine.IsPathLike(text) {
			// An exact id needs no listing (finish of many ids stays
			// one read each).
			if _, err := e.Store.Get(text); err == nil {
				id = text
			} else if !errors.Is(err, store.ErrNotFound) {
				return nil, err
			}
		}
		if id == "" {
			if !listed {
				recs, err := e.Store.List()
				if err != nil {
					return nil, err
				}
				for _, r := range recs {
					cands = append(cands, machine.Candidate{ID: r.ID, Path: r.Path, Gone: r.State == machine.StateTombstoned})
				}
				listed = true
			}
			c, r := machine.ResolveReference(ReferenceIn(dir, text), cands, retry)
			if r != nil {
				return nil, r
			}
			id = c.ID
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out, nil
}

// ResolveRecord is ResolveRecords for one reference.
func ResolveRecord(e *Env, dir, ref, retry string) (string, error) {
	ids, err := ResolveRecords(e, dir, []string{ref}, retry)
	if err != nil {
		return "", err
	}
	return ids[0], nil
}

// ResolvePlanItems resolves references against a plan's items (apply
// --only), the same way ResolveRecords does against the store: a plan
// names what apply may touch.
func ResolvePlanItems(plan machine.Plan, dir string, refs []string, retry string) ([]string, error) {
	cands := make([]machine.Candidate, 0, len(plan.Items))
	for _, it := range plan.Items {
		cands = append(cands, machine.Candidate{ID: it.ID, Path: it.Path})
	}
	out := make([]string, 0, len(refs))
	seen := map[string]bool{}
	for _, text := range refs {
		c, r := machine.ResolveReference(ReferenceIn(dir, text), cands, retry)
		if r != nil {
			if r.Code == machine.CodeUnknownRecord {
				// The plan lacks it: apply's own check names it.
				c.ID = text
			} else {
				return nil, r
			}
		}
		if !seen[c.ID] {
			seen[c.ID] = true
			out = append(out, c.ID)
		}
	}
	return out, nil
}

// ReferenceIn is text as a machine.Reference typed in dir: a path-like
// text gets its absolute path with symlinks resolved through the nearest
// existing ancestor (record paths are canonical), so a tree deleted by
// hand is still named by its path; a plain word gets one only when
// something exists at dir/text.
func ReferenceIn(dir, text string) machine.Reference {
	ref := machine.Reference{Text: text}
	if text == "" {
		return ref
	}
	if !machine.IsPathLike(text) && !filepath.IsAbs(text) {
		if _, err := os.Lstat(filepath.Join(dir, text)); err != nil {
			return ref
		}
	}
	p := text
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	ref.Path = canonical(filepath.Clean(p))
	return ref
}

// canonical resolves the symlinks of p's nearest existing ancestor and
// joins the rest, which does not exist, as it is.
func canonical(p string) string {
	rest := ""
	for {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(real, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest)
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}
