package machine

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	json "github.com/custody-sh/custody/machine/bytejson"
)

// RepositoryIndexFormat names the user-level index of the repositories
// custody was initialised in, which custody list --all-repos reads
// (decision 0249).
const RepositoryIndexFormat = "custody.repositories/1"

// ErrRepositoryIndex is returned for a repository index custody does not
// read: another format, malformed JSON, an entry without its paths.
var ErrRepositoryIndex = errors.New("not a custody repository index")

// RepositoryIndex is the user-level index of repositories: one entry per
// repository (by its common dir), kept sorted. It holds no state of a
// repository; each repository's own state file does.
type RepositoryIndex struct {
	Format       string              `json:"format"`
	Repositories []IndexedRepository `json:"repositories"`
}

// IndexedRepository is one repository in the index: its paths exactly
// (bytes, in bytejson's encoding) and when it was first recorded.
type IndexedRepository struct {
	// CommonDir is the repository's canonical common git dir, its
	// identity.
	CommonDir string `json:"common_dir"`
	// MainCheckout is its main checkout, where list --all-repos shows it.
	MainCheckout string `json:"main_checkout"`
	// AddedAt is when custody first recorded it.
	AddedAt time.Time `json:"added_at"`
}

// ParseRepositoryIndex reads an index file's bytes strictly: the format,
// then entries with both paths, absolute. An empty file is an empty index.
func ParseRepositoryIndex(b []byte) (RepositoryIndex, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return RepositoryIndex{Format: RepositoryIndexFormat}, nil
	}
	var x RepositoryIndex
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&x); err != nil {
		return RepositoryIndex{}, fmt.Errorf("%w: %v", ErrRepositoryIndex, err)
	}
	if x.Format != RepositoryIndexFormat {
		return RepositoryIndex{}, fmt.Errorf("%w: format %q, want %q", ErrRepositoryIndex, x.Format, RepositoryIndexFormat)
	}
	for i, r := range x.Repositories {
		if !strings.HasPrefix(r.CommonDir, "/") && !windowsAbs(r.CommonDir) || r.MainCheckout == "" {
			return RepositoryIndex{}, fmt.Errorf("%w: entry %d has no absolute common_dir and main_checkout", ErrRepositoryIndex, i)
		}
	}
	return x, nil
}

// windowsAbs reports whether p starts with a drive letter and a
// separator (C:\ or C:/).
func windowsAbs(p string) bool {
	return len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') &&
		(p[0] >= 'A' && p[0] <= 'Z' || p[0] >= 'a' && p[0] <= 'z')
}

// With is x with r recorded: added when its common dir is new, its main
// checkout updated when that moved (AddedAt kept), sorted by common dir.
// Changed says whether anything differs from x.
func (x RepositoryIndex) With(r IndexedRepository) (out RepositoryIndex, changed bool) {
	out = RepositoryIndex{Format: RepositoryIndexFormat, Repositories: slices.Clone(x.Repositories)}
	i := slices.IndexFunc(out.Repositories, func(e IndexedRepository) bool { return e.CommonDir == r.CommonDir })
	switch {
	case i < 0:
		out.Repositories = append(out.Repositories, r)
		changed = true
	case out.Repositories[i].MainCheckout != r.MainCheckout:
		out.Repositories[i].MainCheckout = r.MainCheckout
		changed = true
	}
	slices.SortFunc(out.Repositories, func(a, b IndexedRepository) int { return strings.Compare(a.CommonDir, b.CommonDir) })
	return out, changed || x.Format != RepositoryIndexFormat
}

// Holds reports whether x records the repository whose common dir is
// commonDir.
func (x RepositoryIndex) Holds(commonDir string) bool {
	return slices.ContainsFunc(x.Repositories, func(e IndexedRepository) bool { return e.CommonDir == commonDir })
}
