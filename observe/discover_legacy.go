package observe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/proof"
	"github.com/custody-sh/custody/observe/safefile"
)

// DefaultScanLimit bounds how many entries of the main checkout's parent
// migrate discover reads.
const DefaultScanLimit = 4096

// LegacyPlaces are the facts of every place one discovery read, and the
// bounds it read them within. Complete is false when a bounded collection
// was cut short.
type LegacyPlaces struct {
	Facts    []machine.LegacyFacts
	Bounds   machine.MigrateBounds
	Complete bool
}

// DiscoverLegacy reads every linked worktree git registers (inv) and every
// directory entry of the main checkout's parent, at most limit of them,
// into facts: registration, the filesystem's view, what .git is and which
// common dir it resolves to, compared with this repository's by device and
// inode. live maps a live record's path and admin key to its id. The main
// checkout itself is not a place. Nothing is written, and nothing of
// another repository is run but a read of its HEAD.
func DiscoverLegacy(ctx context.Context, g *hostio.Git, repo hostio.Repo, inv gitfiles.Inventory, live map[string]string, limit int) (LegacyPlaces, error) {
	if limit <= 0 {
		limit = DefaultScanLimit
	}
	common, err := hostio.IdentityOf(repo.CommonDir)
	if err != nil {
		return LegacyPlaces{}, fmt.Errorf("identify the repository's common dir: %w", err)
	}
	mainID, err := hostio.IdentityOf(repo.MainCheckout)
	if err != nil {
		return LegacyPlaces{}, fmt.Errorf("identify the main checkout: %w", err)
	}
	parent := filepath.Dir(repo.MainCheckout)
	remotes := remoteDirs(ctx, g, repo)
	out := LegacyPlaces{Bounds: machine.MigrateBounds{ScanDir: parent, ScanLimit: limit}, Complete: true}
	byPath := map[string]int{}
	add := func(f machine.LegacyFacts) {
		byPath[f.Path] = len(out.Facts)
		out.Facts = append(out.Facts, f)
	}
	for i, ent := range inv.Entries {
		if i == 0 || ent.Bare {
			continue
		}
		out.Bounds.Registered++
		p := filepath.Clean(ent.Path)
		f := placeFacts(ctx, g, repo, common, p)
		f.Registered, f.Prunable = true, ent.Prunable
		f.AdminKey = gitfiles.AdminKeyOf(repo, p)
		if f.AdminKey == "" && f.PathState == machine.PathAbsent {
			f.AdminKey = AdminKeyNaming(repo, p)
		}
		if id, ok := live[p]; ok {
			f.Record = id
		} else if id, ok := live["key:"+f.AdminKey]; ok && f.AdminKey != "" {
			f.Record = id
		}
		add(f)
	}
	names, complete, err := readNames(parent, limit)
	if err != nil {
		return LegacyPlaces{}, fmt.Errorf("scan %s: %w", parent, err)
	}
	out.Complete = complete
	out.Bounds.Scanned = len(names)
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return LegacyPlaces{}, err
		}
		p := filepath.Join(parent, name)
		if i, ok := byPath[p]; ok {
			out.Facts[i].Scanned = true
			continue
		}
		fi, err := os.Lstat(p)
		if err == nil && fi.Mode().IsRegular() {
			continue // a file is no place a tree could be
		}
		if id, err := hostio.IdentityOf(p); err == nil && id == mainID && (fi == nil || fi.Mode()&fs.ModeSymlink == 0) {
			continue
		}
		f := placeFacts(ctx, g, repo, common, p)
		f.Scanned = true
		if id, ok := live[p]; ok {
			f.Record = id
		}
		add(f)
	}
	// A tree moved without git: its .git file still names its admin
	// entry, whose gitdir names the old path. The registration and the
	// tree are told to each other by that identity, not by a path.
	movedTo := map[string]string{}
	for i := range out.Facts {
		f := &out.Facts[i]
		if f.MovedFrom != "" {
			movedTo[f.AdminKey] = f.Path
		}
		if f.Bare {
			if id, err := hostio.IdentityOf(f.Path); err == nil {
				f.Remotes = remotes[id]
			}
		}
	}
	for i := range out.Facts {
		f := &out.Facts[i]
		if to, ok := movedTo[f.AdminKey]; ok && f.Registered && f.PathState == machine.PathAbsent && f.AdminKey != "" {
			f.MovedTo = to
		}
	}
	sort.SliceStable(out.Facts, func(i, j int) bool { return out.Facts[i].Path < out.Facts[j].Path })
	return out, nil
}

// remoteDirs maps the identity of each local repository a remote of repo
// reads (its url values, as configured) to the remotes' names. A remote
// that cannot be read or identified is left out: it only names a place.
func remoteDirs(ctx context.Context, g *hostio.Git, repo hostio.Repo) map[hostio.Identity][]string {
	out := map[hostio.Identity][]string{}
	b, err := g.Observe(ctx, repo.MainCheckout, "config", "-z", "--get-regexp", `^remote\..*\.url$`)
	if err != nil {
		return out
	}
	for _, kv := range strings.Split(string(b), "\x00") {
		key, url, ok := strings.Cut(kv, "\n")
		if !ok {
			continue
		}
		name := strings.TrimSuffix(strings.TrimPrefix(key, "remote."), ".url")
		p, local := proof.LocalRemotePath(url, repo.MainCheckout)
		if !local {
			continue
		}
		if id, err := hostio.IdentityOf(p); err == nil && !slices.Contains(out[id], name) {
			out[id] = append(out[id], name)
		}
	}
	return out
}

// readNames reads at most limit names of dir, sorted; complete is false
// when dir holds more.
func readNames(dir string, limit int) ([]string, bool, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, false, err
	}
	defer d.Close()
	names, err := d.Readdirnames(limit + 1)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, false, err
	}
	complete := len(names) <= limit
	if !complete {
		names = names[:limit]
	}
	sort.Strings(names)
	return names, complete, nil
}

// placeFacts reads what path is on disk and which repository its .git
// belongs to.
func placeFacts(ctx context.Context, g *hostio.Git, repo hostio.Repo, common hostio.Identity, path string) machine.LegacyFacts {
	f := machine.LegacyFacts{Path: path, Git: machine.GitNone}
	pi := hostio.Lstat(path)
	f.PathState, f.IsDir, f.IsSymlink = pi.State, pi.IsDir, pi.IsSymlink
	if pi.State != machine.PathPresent || pi.IsSymlink || !pi.IsDir {
		return f
	}
	dotgit := filepath.Join(path, ".git")
	gi := hostio.Lstat(dotgit)
	switch {
	case gi.State == machine.PathAbsent && bareLayout(path):
		// A bare repository: the directory is its own git dir.
		f.Git, f.Bare = machine.GitDir, true
		id, err := hostio.IdentityOf(path)
		f.CommonKnown = err == nil
		f.SameCommon = err == nil && id == common
		if !f.SameCommon {
			f.SharesHistory, f.Ahead = historyRelation(ctx, g, repo, path)
		}
		return f
	case gi.State == machine.PathAbsent:
		return f
	case gi.State != machine.PathPresent || gi.IsSymlink:
		f.Git, f.GitError = machine.GitUnreadable, fmt.Sprintf("%s is %s", dotgit, map[bool]string{true: "a symlink", false: "unobservable: " + gi.Err}[gi.IsSymlink])
		return f
	case gi.IsDir:
		f.Git = machine.GitDir
		id, err := hostio.IdentityOf(dotgit)
		f.CommonKnown = err == nil
		f.SameCommon = err == nil && id == common
		if !f.SameCommon {
			f.SharesHistory, f.Ahead = historyRelation(ctx, g, repo, dotgit)
		}
		return f
	}
	f.Git = machine.GitFile
	dir, err := gitfiles.ReadGitFile(dotgit)
	if err != nil {
		f.Git, f.GitError = machine.GitUnreadable, err.Error()
		return f
	}
	cd, err := gitfiles.ReadCommonDir(dir)
	if err != nil {
		cd = dir
	}
	id, err := hostio.IdentityOf(cd)
	if err != nil && filepath.Base(filepath.Dir(dir)) == "worktrees" {
		// The admin entry is gone: the .git file still names the common
		// dir that held it, <common>/worktrees/<key> (a missing
		// registration).
		id, err = hostio.IdentityOf(filepath.Dir(filepath.Dir(dir)))
	}
	f.CommonKnown = err == nil
	f.SameCommon = err == nil && id == common
	if f.SameCommon && filepath.Base(filepath.Dir(dir)) == "worktrees" {
		// The admin entry this .git names: when its gitdir names another
		// path, one that is gone, the tree was moved here without git.
		if b, err := safefile.Read(filepath.Join(dir, "gitdir"), gitfiles.SmallFileLimit); err == nil {
			was := filepath.Clean(strings.TrimSpace(string(b)))
			if was != filepath.Join(path, ".git") && filepath.Base(was) == ".git" && hostio.Lstat(filepath.Dir(was)).State == machine.PathAbsent {
				f.MovedFrom, f.AdminKey = filepath.Dir(was), filepath.Base(dir)
			}
		}
	}
	return f
}

// historyRelation reads how the independent repository at gitDir relates
// to this one: whether its HEAD (every ref, when HEAD names no commit)
// reaches a commit this repository holds, and how many of the commits it
// reaches this repository does not hold (the newest machine.CloneWalkBound
// of them are read; more is CloneWalkBound+1).
func historyRelation(ctx context.Context, g *hostio.Git, repo hostio.Repo, gitDir string) (shares bool, ahead int) {
	tip := []string{"HEAD"}
	if _, err := g.Observe(ctx, repo.MainCheckout, "--git-dir="+gitDir, "rev-parse", "--verify", "-q", "HEAD^{commit}"); err != nil {
		tip = []string{"--all"}
	}
	out, err := g.Observe(ctx, repo.MainCheckout, append([]string{"--git-dir=" + gitDir, "rev-list", fmt.Sprintf("--max-count=%d", machine.CloneWalkBound+1)}, tip...)...)
	if err != nil {
		return false, 0
	}
	commits := strings.Fields(string(out))
	if len(commits) == 0 {
		return false, 0
	}
	held, err := g.ObserveInput(ctx, repo.MainCheckout, []byte(strings.Join(commits, "\n")+"\n"), "cat-file", "--batch-check=%(objectname) %(objecttype)")
	if err != nil {
		return false, 0
	}
	missing := 0
	for _, line := range strings.Split(strings.TrimRight(string(held), "\n"), "\n") {
		switch {
		case strings.HasSuffix(line, " commit"):
			shares = true
		case strings.HasSuffix(line, " missing"):
			missing++
		}
	}
	if !shares && len(commits) <= machine.CloneWalkBound {
		return false, 0
	}
	if !shares {
		return false, machine.CloneWalkBound + 1
	}
	return true, missing
}

// AdminKeyNaming returns the admin entry of repo whose gitdir file names
// path/.git, "" when none does or the entries cannot be read. It finds
// the key of a registered tree whose directory is gone (no .git file is
// left to name it).
func AdminKeyNaming(repo hostio.Repo, path string) string {
	dir := filepath.Join(repo.CommonDir, "worktrees")
	names, _, err := readNames(dir, DefaultScanLimit)
	if err != nil {
		return ""
	}
	want := filepath.Join(path, ".git")
	found := ""
	for _, n := range names {
		b, err := safefile.Read(filepath.Join(dir, n, "gitdir"), gitfiles.SmallFileLimit)
		if err != nil || filepath.Clean(strings.TrimSpace(string(b))) != want {
			continue
		}
		if found != "" {
			return "" // two entries name it: not exact
		}
		found = n
	}
	return found
}

// Stash is one entry of refs/stash's reflog.
type Stash struct {
	Commit  string
	Parent  string
	Subject string
}

// StashLimit bounds how many stash entries one read lists.
const StashLimit = 1000

// Stashes lists the stash entries (newest first), at most StashLimit;
// complete is false when there are more.
func Stashes(ctx context.Context, g *hostio.Git, repo hostio.Repo) ([]Stash, bool, error) {
	if _, err := g.Observe(ctx, repo.MainCheckout, "rev-parse", "--verify", "-q", "refs/stash"); err != nil {
		return nil, true, nil // no stash at all
	}
	out, err := g.Observe(ctx, repo.MainCheckout, "log", "-g", fmt.Sprintf("--max-count=%d", StashLimit+1), "--format=%H%x00%P%x00%gs", "refs/stash", "--")
	if err != nil {
		return nil, false, fmt.Errorf("list the stashes: %w", err)
	}
	var list []Stash
	for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		parts := strings.SplitN(line, "\x00", 3)
		if len(parts) != 3 {
			continue
		}
		parent, _, _ := strings.Cut(parts[1], " ")
		list = append(list, Stash{Commit: parts[0], Parent: parent, Subject: parts[2]})
	}
	if len(list) > StashLimit {
		return list[:StashLimit], false, nil
	}
	return list, true, nil
}

// Unpushed counts the commits head has that none of tips holds, at most
// bound+1.
func Unpushed(ctx context.Context, g *hostio.Git, repo hostio.Repo, head string, tips []string, bound int) (int, error) {
	var in strings.Builder
	in.WriteString(head + "\n")
	for _, t := range tips {
		in.WriteString("^" + t + "\n")
	}
	out, err := g.ObserveInput(ctx, repo.MainCheckout, []byte(in.String()), "rev-list", "--count", fmt.Sprintf("--max-count=%d", bound+1), "--stdin")
	if err != nil {
		return 0, fmt.Errorf("count the unpushed commits of %s: %w", head, err)
	}
	var n int
	if _, err := fmt.Sscanf(strings.TrimSpace(string(out)), "%d", &n); err != nil {
		return 0, fmt.Errorf("count the unpushed commits of %s: %q", head, out)
	}
	return n, nil
}

// bareLayout says dir looks like a bare repository: a HEAD file and
// objects and refs directories.
func bareLayout(dir string) bool {
	h := hostio.Lstat(filepath.Join(dir, "HEAD"))
	o := hostio.Lstat(filepath.Join(dir, "objects"))
	r := hostio.Lstat(filepath.Join(dir, "refs"))
	return h.State == machine.PathPresent && !h.IsDir && !h.IsSymlink && o.IsDir && !o.IsSymlink && r.IsDir && !r.IsSymlink
}
