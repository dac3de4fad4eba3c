package gitfiles

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/safefile"
)

// errRefsUnreadable is returned by readBranches when the ref store is not
// one custody reads itself exactly (reftable, a symbolic or malformed
// ref, a name git would read differently): the caller asks git instead.
var errRefsUnreadable = errors.New("the ref store is not plain files custody reads exactly")

// packedRefsLimit bounds what custody reads of packed-refs; a larger file
// is left to git.
const packedRefsLimit = 64 << 20

// readBranches reads the tips of the named local branches from the files
// Git keeps them in, as git does: the loose ref <common>/refs/heads/NAME
// first, then packed-refs (git packs a ref before it deletes the loose
// one, so this order never misses one). A branch that exists nowhere is
// absent from the map. Anything custody cannot read exactly is
// errRefsUnreadable, never a guess.
func readBranches(repo hostio.Repo, names []string) (map[string]string, error) {
	if pi := hostio.Lstat(filepath.Join(repo.CommonDir, "reftable")); pi.State != machine.PathAbsent {
		return nil, errRefsUnreadable
	}
	out := map[string]string{}
	var missing []string
	for _, name := range names {
		if !plainRefName(name) {
			return nil, errRefsUnreadable
		}
		b, err := safefile.Read(filepath.Join(repo.CommonDir, "refs", "heads", filepath.FromSlash(name)), SmallFileLimit)
		switch {
		case err == nil:
			oid := strings.TrimSuffix(string(b), "\n")
			if !hostio.IsHexOID(oid) {
				return nil, errRefsUnreadable // symbolic, broken, or written oddly
			}
			out[name] = oid
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, safefile.ErrNotRegular) && hostio.Lstat(filepath.Join(repo.CommonDir, "refs", "heads", filepath.FromSlash(name))).IsDir:
			missing = append(missing, name)
		default:
			return nil, errRefsUnreadable
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	packed, err := safefile.Read(filepath.Join(repo.CommonDir, "packed-refs"), packedRefsLimit)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, errRefsUnreadable
	}
	want := map[string]bool{}
	for _, name := range missing {
		want["refs/heads/"+name] = true
	}
	refs, err := parsePackedRefs(packed)
	if err != nil {
		return nil, errRefsUnreadable
	}
	for ref, oid := range refs {
		if want[ref] {
			out[strings.TrimPrefix(ref, "refs/heads/")] = oid
		}
	}
	return out, nil
}

// parsePackedRefs parses packed-refs: an optional "# pack-refs with:"
// header, "<oid> <refname>" lines, and "^<oid>" peeled lines (skipped).
func parsePackedRefs(b []byte) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case line == "":
		case strings.HasPrefix(line, "#"):
			if n != 1 {
				return nil, fmt.Errorf("packed-refs line %d: a comment after the header", n)
			}
		case strings.HasPrefix(line, "^"):
			if !hostio.IsHexOID(line[1:]) {
				return nil, fmt.Errorf("packed-refs line %d: not a peeled object id", n)
			}
		default:
			oid, ref, ok := strings.Cut(line, " ")
			if !ok || !hostio.IsHexOID(oid) || !strings.HasPrefix(ref, "refs/") {
				return nil, fmt.Errorf("packed-refs line %d: not \"<oid> <refname>\"", n)
			}
			out[ref] = oid
		}
	}
	return out, sc.Err()
}

// plainRefName reports whether name is a branch name custody maps to a
// file path exactly as git does: slash-separated components, none empty,
// "." or "..", none starting with "." or ending with ".lock", and no byte
// Git forbids in a ref name.
func plainRefName(name string) bool {
	if name == "" || strings.HasSuffix(name, ".") || strings.Contains(name, "@{") {
		return false
	}
	for _, c := range strings.Split(name, "/") {
		if c == "" || strings.HasPrefix(c, ".") || strings.HasSuffix(c, ".lock") {
			return false
		}
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c < 0x20 || c == 0x7f, c == ' ', c == '~', c == '^', c == ':', c == '?', c == '*', c == '[', c == '\\':
			return false
		}
	}
	return true
}
