package observe

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/proof"
)

// UnpublishedCommits lists the commits head adds over the advertised tips,
// newest first, as `git rev-list ^<tips> <head>` walks them: the set the
// proof search reads off its history walk (historyGraph.of), asked of git
// on its own, since an archive is made of one head.
func UnpublishedCommits(ctx context.Context, g *hostio.Git, repo hostio.Repo, head string, v *proof.RemoteView) ([]string, error) {
	var tips []proof.Tip
	if v != nil {
		tips = v.Tips
	}
	us, err := proof.UniqueCommits(ctx, g, repo, head, tips)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = u.Commit
	}
	return out, nil
}

// ObjectFormatOf returns the repository's object format.
func ObjectFormatOf(ctx context.Context, g *hostio.Git, dir string) (gitfiles.ObjectFormat, error) {
	out, err := g.Observe(ctx, dir, "rev-parse", "--show-object-format")
	if err != nil {
		return "", fmt.Errorf("object format of %s: %w", dir, err)
	}
	return gitfiles.ObjectFormat(strings.TrimSpace(string(out))), nil
}

// InitScratch makes a bare repository at dir whose object store borrows
// alternates (object directories, each absolute) and returns its objects
// directory. It is scratch: custody's own, never a person's repository.
func InitScratch(ctx context.Context, g *hostio.Git, dir string, format gitfiles.ObjectFormat, alternates ...string) (string, error) {
	if _, err := g.RunWith(ctx, "/", nil, nil, "init", "--bare", "--quiet", "--object-format="+string(format), dir); err != nil {
		return "", fmt.Errorf("make scratch repository %s: %w", dir, err)
	}
	objects := filepath.Join(dir, "objects")
	if len(alternates) > 0 {
		var b strings.Builder
		for _, a := range alternates {
			b.WriteString(AlternateLine(a))
			b.WriteByte('\n')
		}
		if err := os.WriteFile(filepath.Join(objects, "info", "alternates"), []byte(b.String()), 0o644); err != nil {
			return "", err
		}
	}
	return objects, nil
}

// AlternateLine is the line of objects/info/alternates that names the
// object directory dir as git reads it (odb.c, parse_alt_odb_entry): dir
// as it is, or, when it holds a control byte or begins with '"' or '#'
// (a repository under a directory named with a newline), git's C-quoted
// form, each such byte, '"' and '\\' escaped.
func AlternateLine(dir string) string {
	if !strings.ContainsFunc(dir, func(r rune) bool { return r < 0x20 || r == 0x7f }) && !strings.HasPrefix(dir, "\"") && !strings.HasPrefix(dir, "#") {
		return dir
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(dir); i++ {
		switch c := dir[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, `\%03o`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// scratchGit runs git in the scratch repository gitDir with config that
// cannot change bytes: no attributes file, no prefix or rename settings.
func scratchGit(ctx context.Context, g *hostio.Git, gitDir string, env []string, stdin []byte, args ...string) ([]byte, error) {
	full := append([]string{"--git-dir=" + gitDir, "-c", "core.attributesFile=/dev/null", "-c", "diff.noprefix=false",
		"-c", "diff.mnemonicPrefix=false", "-c", "diff.relative=false", "-c", "core.quotePath=true", "-c", "apply.whitespace=nowarn",
		"-c", "core.autocrlf=false", "-c", "core.safecrlf=false"}, args...)
	return g.RunWith(ctx, "/", env, stdin, full...)
}

// WriteScratchTree builds the tree of s's files in a scratch index
// (index, a file of the scratch repository gitDir) and returns its id.
// With missingOK the blobs need not exist (a fingerprint: only the ids
// matter), and the tree objects go into gitDir's objects.
func WriteScratchTree(ctx context.Context, g *hostio.Git, gitDir, index string, s TreeScan, missingOK bool) (string, error) {
	env := []string{"GIT_INDEX_FILE=" + index}
	if _, err := scratchGit(ctx, g, gitDir, env, s.IndexInfo(), "update-index", "-z", "--index-info"); err != nil {
		return "", fmt.Errorf("scratch index of %s: %w", s.Root, err)
	}
	args := []string{"write-tree"}
	if missingOK {
		args = append(args, "--missing-ok")
	}
	out, err := scratchGit(ctx, g, gitDir, env, nil, args...)
	if err != nil {
		return "", fmt.Errorf("tree of %s: %w", s.Root, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// WritePatch writes to file the binary-safe, byte-exact patch that takes
// tree from to tree to, both in the scratch repository gitDir: every
// file's full index line, no renames, no textconv or external diff, and no
// attributes (the scratch repository is bare, its attributes file empty).
func WritePatch(ctx context.Context, g *hostio.Git, gitDir, from, to, file string) error {
	_, err := scratchGit(ctx, g, gitDir, nil, nil, "diff-tree", "-r", "-p", "--binary", "--full-index", "--no-renames",
		"--no-textconv", "--no-ext-diff", "--no-color", "--output="+file, from, to)
	if err != nil {
		return fmt.Errorf("patch of %s over %s: %w", to, from, err)
	}
	return nil
}

// CreateBundle writes to file a bundle of ref (a ref of the scratch
// repository gitDir) over the prerequisites: the commits it adds.
func CreateBundle(ctx context.Context, g *hostio.Git, gitDir, ref string, not []string, file string) error {
	var in bytes.Buffer
	in.WriteString(ref + "\n")
	for _, n := range not {
		in.WriteString("^" + n + "\n")
	}
	if _, err := scratchGit(ctx, g, gitDir, nil, in.Bytes(), "bundle", "create", "--quiet", file, "--stdin"); err != nil {
		return fmt.Errorf("bundle %s: %w", file, err)
	}
	return nil
}

// BundleHeader is a bundle's header: the commits it stands on and the refs
// it holds.
type BundleHeader struct {
	Prerequisites []string
	Refs          map[string]string
	// PackOffset is where the pack data starts.
	PackOffset int64
}

// ReadBundleHeader parses the header of a v2 or v3 bundle.
func ReadBundleHeader(file string) (BundleHeader, error) {
	f, err := os.Open(file)
	if err != nil {
		return BundleHeader{}, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	h := BundleHeader{Refs: map[string]string{}}
	first, err := br.ReadString('\n')
	if err != nil || (first != "# v2 git bundle\n" && first != "# v3 git bundle\n") {
		return h, fmt.Errorf("%s is not a git bundle", file)
	}
	off := int64(len(first))
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return h, fmt.Errorf("%s: truncated bundle header", file)
		}
		off += int64(len(line))
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			h.PackOffset = off
			return h, nil
		case strings.HasPrefix(line, "@"):
			// a v3 capability (object-format=…)
		case strings.HasPrefix(line, "-"):
			oid, _, _ := strings.Cut(line[1:], " ")
			h.Prerequisites = append(h.Prerequisites, oid)
		default:
			oid, ref, ok := strings.Cut(line, " ")
			if !ok {
				return h, fmt.Errorf("%s: malformed bundle header line %q", file, line)
			}
			h.Refs[ref] = oid
		}
	}
}

// CheckPack is the pack check of DESIGN §5: the bundle's pack is indexed
// in an isolated bare repository iso (made here) whose only other objects
// are base (the object directory that holds the bundle's prerequisites, ""
// when none is at hand), and `rev-list --objects` over the bundle's range
// must find every object in that pack. A bundle that names HEAD but omits
// its parents, or any object its commits need, fails; so does one that
// lacks a commit of want (the manifest's commits).
func CheckPack(ctx context.Context, g *hostio.Git, bundle, base, iso string, format gitfiles.ObjectFormat, want []string) *machine.PackCheck {
	h, err := ReadBundleHeader(bundle)
	if err != nil {
		return &machine.PackCheck{Err: err.Error()}
	}
	if len(h.Prerequisites) > 0 && base == "" {
		return &machine.PackCheck{Skipped: "no repository at hand holds the commits the bundle stands on"}
	}
	var alts []string
	if base != "" {
		alts = append(alts, base)
	}
	objects, err := InitScratch(ctx, g, iso, format, alts...)
	if err != nil {
		return &machine.PackCheck{Err: err.Error()}
	}
	f, err := os.Open(bundle)
	if err != nil {
		return &machine.PackCheck{Err: err.Error()}
	}
	defer f.Close()
	if _, err := f.Seek(h.PackOffset, io.SeekStart); err != nil {
		return &machine.PackCheck{Err: err.Error()}
	}
	pack, err := io.ReadAll(f)
	if err != nil {
		return &machine.PackCheck{Err: err.Error()}
	}
	out, err := scratchGit(ctx, g, iso, nil, pack, "index-pack", "--stdin", "--fix-thin")
	if err != nil {
		return &machine.PackCheck{Err: err.Error()}
	}
	name := strings.TrimSpace(string(out))
	name = strings.TrimPrefix(strings.TrimPrefix(name, "pack\t"), "keep\t")
	idx, err := os.ReadFile(filepath.Join(objects, "pack", "pack-"+name+".idx"))
	if err != nil {
		return &machine.PackCheck{Err: fmt.Sprintf("index of the bundle's pack: %v", err)}
	}
	listed, err := scratchGit(ctx, g, iso, nil, idx, "show-index", "--object-format="+string(format))
	if err != nil {
		return &machine.PackCheck{Err: err.Error()}
	}
	inPack := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(listed)), "\n") {
		if f := strings.Fields(line); len(f) >= 2 {
			inPack[f[1]] = true
		}
	}
	var missing []string
	for _, c := range want {
		if !inPack[c] {
			missing = append(missing, c)
		}
	}
	var in bytes.Buffer
	for _, oid := range h.Refs {
		in.WriteString(oid + "\n")
	}
	for _, p := range h.Prerequisites {
		in.WriteString("^" + p + "\n")
	}
	revs, err := scratchGit(ctx, g, iso, nil, in.Bytes(), "rev-list", "--objects", "--stdin")
	if err != nil {
		var ee *hostio.ExitError
		if errors.As(err, &ee) {
			return &machine.PackCheck{Missing: append(missing, "objects the range needs ("+hostio.MainLine(strings.TrimSpace(ee.Stderr))+")")}
		}
		return &machine.PackCheck{Err: err.Error()}
	}
	for _, line := range strings.Split(strings.TrimSpace(string(revs)), "\n") {
		oid, _, _ := strings.Cut(line, " ")
		if oid != "" && !inPack[oid] && !slices.Contains(missing, oid) {
			missing = append(missing, oid)
		}
	}
	return &machine.PackCheck{Missing: missing}
}

// PrerequisitesPublished reports whether every commit in prereqs is an
// ancestor of (or is) a tip v advertises now: plain ancestry, replace
// objects and grafts disabled, never patch equivalence. A commit missing
// locally is not published.
func PrerequisitesPublished(ctx context.Context, g *hostio.Git, repo hostio.Repo, prereqs []string, v *proof.RemoteView) (bool, error) {
	for _, p := range prereqs {
		ok := false
		for _, t := range v.Tips {
			if t.Commit == p {
				ok = true
				break
			}
		}
		for i := 0; !ok && i < len(v.Tips); i++ {
			var err error
			if ok, err = proof.IsAncestor(ctx, g, repo, p, v.Tips[i].Commit); err != nil {
				return false, err
			}
		}
		if !ok {
			return false, nil
		}
	}
	return true, nil
}

// CommitsNotOnRemote returns the commits no tip of v contains, by plain
// ancestry (never patch equivalence). A commit the repository does not
// hold is not on any remote as far as custody can tell.
func CommitsNotOnRemote(ctx context.Context, g *hostio.Git, repo hostio.Repo, commits []string, v *proof.RemoteView) ([]string, error) {
	var out []string
	for _, c := range commits {
		if _, err := g.Observe(ctx, repo.MainCheckout, "cat-file", "-e", c+"^{commit}"); err != nil {
			out = append(out, c)
			continue
		}
		ok, err := PrerequisitesPublished(ctx, g, repo, []string{c}, v)
		if err != nil {
			return nil, err
		}
		if !ok {
			out = append(out, c)
		}
	}
	return out, nil
}
