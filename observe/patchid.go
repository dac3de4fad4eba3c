package observe

import (
	"bytes"
)

// PatchID is one line of `git patch-id` output.
type PatchID struct {
	ID     string
	Commit string
}

// ParsePatchIDs parses `git patch-id` output: "<patch-id> <commit-id>"
// lines. A commit with an empty patch has no line.
func ParsePatchIDs(b []byte) ([]PatchID, error) {
	var out []PatchID
	b = bytes.TrimSuffix(b, []byte{'\n'})
	if len(b) == 0 {
		return nil, nil
	}
	for n, line := range bytes.Split(b, []byte{'\n'}) {
		if len(line) == 0 {
			return nil, malformedAt("patch-id", "line %d is empty", n+1)
		}
		id, commit, ok := bytes.Cut(line, []byte{' '})
		if !ok || !isHexOID(string(id)) || !isHexOID(string(commit)) {
			return nil, malformedAt("patch-id", "line %d is not \"<patch-id> <commit>\"", n+1)
		}
		out = append(out, PatchID{ID: string(id), Commit: string(commit)})
	}
	return out, nil
}
