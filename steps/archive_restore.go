package steps

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
)

// ArchiveRestored is what `custody archive restore` did.
type ArchiveRestored struct {
	Archive string `json:"archive"`
	Dir     string `json:"dir"`
	Head    string `json:"head"`
	Branch  string `json:"branch,omitempty"`
	Files   int    `json:"files"`
	Nested  int    `json:"nested"`
}

// restoreChunk bounds how many blob bytes one cat-file --batch returns.
const restoreChunk = 32 << 20

// RestoreArchive rebuilds the tree of the archive in dir at target, a
// path that does not exist yet or an empty directory: a new repository
// whose HEAD is the archived commit (from the bundle, standing on
// prerequisites fetched from the recorded remotes, or the repository it
// came from when that still exists), whose index is HEAD's tree, and
// whose files are the archived tree byte for byte: HEAD's tree with the
// patch applied must equal the recorded worktree_tree, then every file is
// written from its blob without filters (exec bits, symbolic links,
// dangling too, empty and binary files, any line ending), each nested
// repository extracted from its image, and each empty directory made.
//
// When e holds the archive's record, manifest.json must also be the one
// that was sealed.
func RestoreArchive(ctx context.Context, g *observe.Git, e *Env, dir, target string) (ArchiveRestored, error) {
	res := ArchiveRestored{Dir: target}
	obs := observe.ObserveArchiveDir(dir)
	m, problems := machine.CheckArchive(obs)
	if len(problems) > 0 {
		return res, &problems[0]
	}
	if r, err := sealedManifest(e, dir, m); err != nil || r != nil {
		if r != nil {
			return res, r
		}
		return res, err
	}
	res.Archive, res.Head, res.Branch = m.ID, m.Head, m.Branch
	retry := "custody archive restore " + machine.QuotePath(dir) + " " + machine.QuotePath(target)
	if err := emptyTarget(target, retry); err != nil {
		return res, err
	}
	format := observe.ObjectFormat(m.ObjectFormat)
	if _, err := g.RunWith(ctx, filepath.Dir(target), nil, nil, "init", "--quiet", "--object-format="+string(format), "--", target); err != nil {
		return res, fmt.Errorf("restore: init %s: %w", target, err)
	}
	gitDir := filepath.Join(target, ".git")
	git := func(stdin []byte, env []string, args ...string) ([]byte, error) {
		return g.RunWith(ctx, target, env, stdin, append([]string{"--git-dir=" + gitDir, "-c", "core.attributesFile=/dev/null",
			"-c", "apply.whitespace=nowarn", "-c", "core.autocrlf=false"}, args...)...)
	}
	if err := fetchPrerequisites(m, git); err != nil {
		return res, err
	}
	ref := bundleRef(m.Branch)
	if m.HasBundle() {
		bundle := filepath.Join(dir, machine.ArchiveBundleName)
		tmp, err := os.MkdirTemp("", "custody-restore-check-")
		if err != nil {
			return res, err
		}
		defer os.RemoveAll(tmp)
		obs.Pack = observe.CheckPack(ctx, g, bundle, filepath.Join(gitDir, "objects"), filepath.Join(tmp, "iso"), format, m.Commits)
		if _, problems := machine.CheckArchive(obs); len(problems) > 0 {
			return res, &problems[0]
		}
		if obs.Pack.Skipped != "" {
			return res, &machine.Refusal{Code: machine.CodeArchiveBundleInvalid, Path: bundle, Retry: retry,
				Message: fmt.Sprintf("%s stands on commits %s, which neither the recorded remotes nor %s hold now", bundle,
					strings.Join(m.Prerequisites, ", "), m.CommonDir)}
		}
		if _, err := git(nil, nil, "fetch", "--quiet", "--no-tags", "--update-head-ok", bundle, "+"+ref+":"+ref); err != nil {
			return res, fmt.Errorf("restore: fetch %s: %w", bundle, err)
		}
	}
	if _, err := git(nil, nil, "update-ref", "--no-deref", ref, m.Head); err != nil {
		return res, &machine.Refusal{Code: machine.CodeArchiveIncomplete, Path: dir, Retry: retry,
			Message: fmt.Sprintf("HEAD %s of archive %s is neither in its bundle nor on its remotes now: %v", m.Head, m.ID, err)}
	}
	if m.Branch != "" {
		_, err := git(nil, nil, "symbolic-ref", "HEAD", ref)
		if err != nil {
			return res, err
		}
	} else if _, err := git(nil, nil, "update-ref", "--no-deref", "HEAD", m.Head); err != nil {
		return res, err
	}
	// HEAD's tree with the patch applied, in a scratch index, must be the
	// recorded tree of the files.
	index := filepath.Join(gitDir, "custody-restore-index")
	defer os.Remove(index)
	env := []string{"GIT_INDEX_FILE=" + index}
	if _, err := git(nil, env, "read-tree", m.HeadTree); err != nil {
		return res, fmt.Errorf("restore: read HEAD's tree: %w", err)
	}
	patch := filepath.Join(dir, machine.ArchivePatchName)
	if fi, err := os.Stat(patch); err == nil && fi.Size() > 0 {
		if _, err := git(nil, env, "apply", "--cached", "--binary", "--", patch); err != nil {
			return res, &machine.Refusal{Code: machine.CodeArchiveInvalid, Path: patch, Retry: retry,
				Message: fmt.Sprintf("%s does not apply to HEAD's tree: %v", patch, err)}
		}
	}
	out, err := git(nil, env, "write-tree")
	if err != nil {
		return res, err
	}
	if got := strings.TrimSpace(string(out)); got != m.WorktreeTree {
		return res, &machine.Refusal{Code: machine.CodeArchiveInvalid, Path: patch, Retry: retry,
			Message: fmt.Sprintf("HEAD's tree with %s is %s; the manifest records %s", patch, got, m.WorktreeTree)}
	}
	n, err := materialize(git, m.WorktreeTree, target)
	if err != nil {
		return res, err
	}
	res.Files = n
	for _, nr := range m.Nested {
		f, err := os.Open(filepath.Join(dir, nr.Image))
		if err != nil {
			return res, err
		}
		err = observe.ExtractImage(f, filepath.Join(target, filepath.FromSlash(nr.Path)))
		f.Close()
		if err != nil {
			return res, fmt.Errorf("restore nested repository %s: %w", nr.Path, err)
		}
		res.Nested++
	}
	for _, d := range m.EmptyDirs {
		if err := os.MkdirAll(filepath.Join(target, filepath.FromSlash(d)), 0o755); err != nil {
			return res, err
		}
	}
	// The index is HEAD's tree, so git shows the archived changes as
	// changes.
	if _, err := git(nil, nil, "read-tree", m.Head); err != nil {
		return res, fmt.Errorf("restore: index: %w", err)
	}
	return res, nil
}

// emptyTarget refuses a target that exists and is not an empty directory.
func emptyTarget(target, retry string) error {
	fi, err := os.Lstat(target)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.IsDir() && fi.Mode()&fs.ModeSymlink == 0 {
		ents, err := os.ReadDir(target)
		if err == nil && len(ents) == 0 {
			return nil
		}
	}
	return &machine.Refusal{Code: machine.CodeUnsafeTarget, Path: target, Retry: retry,
		Message: fmt.Sprintf("%s exists and is not an empty directory; a restore writes only into a new one", machine.EscapeControl(target))}
}

// fetchPrerequisites fetches the commits the bundle stands on (and HEAD,
// when there is no bundle) from each recorded remote, then from the
// repository the archive came from, until all are present.
func fetchPrerequisites(m machine.ArchiveManifest, git func([]byte, []string, ...string) ([]byte, error)) error {
	need := append([]string(nil), m.Prerequisites...)
	if !m.HasBundle() {
		need = append(need, m.Head)
	}
	missing := func() bool {
		for _, c := range need {
			if _, err := git(nil, nil, "cat-file", "-e", c+"^{commit}"); err != nil {
				return true
			}
		}
		return false
	}
	if len(need) == 0 || !missing() {
		return nil
	}
	for _, r := range m.Remotes {
		if _, err := git(nil, nil, "remote", "add", "--", r.Name, r.URL); err != nil {
			continue
		}
		_, _ = git(nil, nil, "fetch", "--quiet", "--no-tags", "--", r.Name)
		if !missing() {
			return nil
		}
	}
	if m.CommonDir != "" && isDir(m.CommonDir) {
		_, _ = git(nil, nil, "fetch", "--quiet", "--no-tags", "--", m.CommonDir, "+refs/*:refs/custody-restore/*")
		if refs, err := git(nil, nil, "for-each-ref", "--format=%(refname)", "refs/custody-restore/"); err == nil {
			var del bytes.Buffer
			for _, r := range strings.Fields(string(refs)) {
				del.WriteString("delete " + r + "\n")
			}
			_, _ = git(del.Bytes(), nil, "update-ref", "--stdin")
		}
	}
	return nil // CheckPack or update-ref says what is still missing
}

// treeEntry is one line of ls-tree -r -l -z.
type treeEntry struct {
	mode, typ, oid, path string
	size                 int64
}

// materialize writes every entry of tree into target from its blob, raw:
// no filter, no eol conversion, no attribute is consulted.
func materialize(git func([]byte, []string, ...string) ([]byte, error), tree, target string) (int, error) {
	out, err := git(nil, nil, "ls-tree", "-r", "-l", "-z", "--full-tree", tree)
	if err != nil {
		return 0, fmt.Errorf("restore: list %s: %w", tree, err)
	}
	var ents []treeEntry
	for _, rec := range bytes.Split(bytes.TrimSuffix(out, []byte{0}), []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		meta, p, ok := strings.Cut(string(rec), "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 4 {
			return 0, fmt.Errorf("restore: malformed ls-tree line %q", rec)
		}
		if !machine.TreePathSafe(p) {
			return 0, fmt.Errorf("restore: tree path %q would leave %s", p, target)
		}
		size, _ := strconv.ParseInt(f[3], 10, 64)
		ents = append(ents, treeEntry{mode: f[0], typ: f[1], oid: f[2], path: p, size: size})
	}
	written := 0
	for start := 0; start < len(ents); {
		end, total := start, int64(0)
		var in bytes.Buffer
		for end < len(ents) && (end == start || total+ents[end].size < restoreChunk) {
			if ents[end].typ == "blob" {
				in.WriteString(ents[end].oid + "\n")
				total += ents[end].size
			}
			end++
		}
		var blobs []byte
		if in.Len() > 0 {
			if blobs, err = git(in.Bytes(), nil, "cat-file", "--batch"); err != nil {
				return written, fmt.Errorf("restore: read blobs: %w", err)
			}
		}
		br := bufio.NewReader(bytes.NewReader(blobs))
		for _, en := range ents[start:end] {
			dst := filepath.Join(target, filepath.FromSlash(en.path))
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return written, err
			}
			if en.typ != "blob" {
				// A gitlink: the submodule's directory, empty.
				if err := os.MkdirAll(dst, 0o755); err != nil {
					return written, err
				}
				continue
			}
			data, err := readBatchBlob(br, en.oid)
			if err != nil {
				return written, err
			}
			switch en.mode {
			case "120000":
				err = os.Symlink(string(data), dst)
			case "100755":
				err = writeMode(dst, data, 0o755)
			default:
				err = writeMode(dst, data, 0o644)
			}
			if err != nil {
				return written, fmt.Errorf("restore %s: %w", en.path, err)
			}
			written++
		}
		start = end
	}
	return written, nil
}

// readBatchBlob reads one "<oid> blob <size>\n<data>\n" of cat-file --batch.
func readBatchBlob(br *bufio.Reader, oid string) ([]byte, error) {
	hdr, err := br.ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("restore: blob %s: %w", oid, err)
	}
	f := strings.Fields(hdr)
	if len(f) != 3 || f[0] != oid || f[1] != "blob" {
		return nil, fmt.Errorf("restore: blob %s: unexpected %q", oid, strings.TrimSpace(hdr))
	}
	n, err := strconv.Atoi(f[2])
	if err != nil {
		return nil, err
	}
	data := make([]byte, n+1)
	if _, err := io.ReadFull(br, data); err != nil {
		return nil, fmt.Errorf("restore: blob %s: %w", oid, err)
	}
	return data[:n], nil
}

// writeMode writes a new file with exactly mode, whatever the umask.
func writeMode(p string, data []byte, mode fs.FileMode) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Chmod(p, mode)
}
