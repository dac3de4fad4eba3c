package machine

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"slices"

	json "github.com/custody-sh/custody/machine/bytejson"
)

// fingerprintBody is the part of an observation a fingerprint covers: the
// tree's own local state. Remote proof is excluded on purpose: it is found
// fresh at apply and must hold then, but a remote that advanced since plan
// does not make the reviewed tree a different tree.
type fingerprintBody struct {
	Path       string    `json:"path"`
	PathState  PathState `json:"path_state"`
	IsDir      bool      `json:"is_dir"`
	IsSymlink  bool      `json:"is_symlink"`
	Dev        uint64    `json:"dev"`
	Ino        uint64    `json:"ino"`
	Registered bool      `json:"registered"`
	AdminKey   string    `json:"admin_key"`
	Head       string    `json:"head"`
	Branch     string    `json:"branch"`
	Detached   bool      `json:"detached"`
	Locked     bool      `json:"locked"`
	Prunable   bool      `json:"prunable"`
	Marker     string    `json:"marker"`
	Status     Status    `json:"status"`
	EnvOwn     bool      `json:"env_own"`
	StatusErr  string    `json:"status_error"`
	// Content is omitted when empty, so fingerprints of trees without
	// unaccounted content are those earlier versions computed.
	Content []Unaccounted `json:"content,omitempty"`
	Hidden  []Hidden      `json:"hidden"`
	// Discarded is omitted when empty, like Content.
	Discarded []DiscardedDir `json:"discarded,omitempty"`
}

// Fingerprint digests the local state of an observation: path identity,
// registration, HEAD, branch, lock, marker, status, unaccounted content
// and hidden state. Two
// observations of an unchanged tree have the same fingerprint; any change a
// person could make to the tree changes it. The result is "sha256:" + hex.
func Fingerprint(o WorktreeObservation) string {
	st := o.Status
	st.Changed = sortedCopy(st.Changed)
	st.Unmerged = sortedCopy(st.Unmerged)
	st.Untracked = sortedCopy(st.Untracked)
	st.Ignored = sortedCopy(st.Ignored)
	st.StagedDiffers = sortedCopy(st.StagedDiffers)
	st.Submodules = sortedCopy(st.Submodules)
	st.Deleted = sortedCopy(st.Deleted)
	var hidden []Hidden
	if len(o.Hidden) > 0 {
		hidden = slices.Clone(o.Hidden)
		slices.SortFunc(hidden, func(a, b Hidden) int {
			return cmp.Or(cmp.Compare(a.Code, b.Code), cmp.Compare(a.Path, b.Path), cmp.Compare(a.Detail, b.Detail))
		})
	}
	b, err := json.Marshal(fingerprintBody{
		Path: o.Path, PathState: o.PathState, IsDir: o.IsDir, IsSymlink: o.IsSymlink,
		Dev: o.Dev, Ino: o.Ino, Registered: o.Registered, AdminKey: o.AdminKey,
		Head: o.Head, Branch: o.Branch, Detached: o.Detached, Locked: o.Locked,
		Prunable: o.Prunable, Marker: o.Marker, Status: st, EnvOwn: o.EnvOwn, StatusErr: o.StatusErr, Hidden: hidden,
		Content: o.Content, Discarded: o.Discarded,
	})
	if err != nil {
		panic("machine: fingerprint body does not marshal: " + err.Error())
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func sortedCopy(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}
